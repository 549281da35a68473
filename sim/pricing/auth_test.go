package pricing

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkpricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

func TestAuthorizationAsPricingAnswers(t *testing.T) {
	mk := func(name, key, doc string) awsauth.Identity {
		return awsauth.Identity{Name: name, ARN: "arn:aws:iam::123456789012:user/" + name, AccessKeyID: key, SecretAccessKey: name,
			Policies: []*policy.Policy{policy.MustParse(name, []byte(doc))}}
	}
	reader := mk("reader", "AKIAREADER0000000001", `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"pricing:GetProducts","Resource":"*"}}`)
	nobody := mk("nobody", "AKIANOBODY0000000001", `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"*"}}`)
	s := New(Options{Guard: awsauth.NewGuard(reader, nobody)})
	url, stop, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(id awsauth.Identity) string {
		c := sdkpricing.New(sdkpricing.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}, Credentials: id.CredentialsProvider()})
		_, err := c.GetProducts(context.Background(), &sdkpricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(1)})
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return "ok"
	}
	stranger := reader
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	if got := [3]string{get(reader), get(nobody), get(stranger)}; got != [3]string{"ok", "AccessDeniedException", "UnrecognizedClientException"} {
		t.Errorf("reader, nobody, stranger: %v", got)
	}
}
