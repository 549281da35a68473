package pricing

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkpricing "github.com/aws/aws-sdk-go-v2/service/pricing"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func TestAuthorizationAsPricingAnswers(t *testing.T) {
	mk := func(name, key, doc string) awsauth.Identity {
		return awsauth.Identity{Name: name, ARN: "arn:aws:iam::123456789012:user/" + name, AccessKeyID: key, SecretAccessKey: name,
			Policies: []*policy.Policy{policy.MustParse(name, []byte(doc))}}
	}
	reader := mk("reader", "AKIAREADER0000000001", `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"pricing:GetProducts","Resource":"*"}}`)
	nobody := mk("nobody", "AKIANOBODY0000000001", `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"*"}}`)
	url := simtest.Serve(t, New(Options{Guard: awsauth.NewGuard(reader, nobody)}))
	get := func(id awsauth.Identity) string {
		c := simtest.Client(sdkpricing.NewFromConfig, url, id.CredentialsProvider())
		_, err := c.GetProducts(context.Background(), &sdkpricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(1)})
		if err != nil {
			return simtest.Code(err)
		}
		return "ok"
	}
	if got := [3]string{get(reader), get(nobody), get(simtest.Stranger(reader))}; got != [3]string{"ok", "AccessDeniedException", "UnrecognizedClientException"} {
		t.Errorf("reader, nobody, stranger: %v", got)
	}
}
