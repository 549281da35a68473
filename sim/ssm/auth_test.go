package ssm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkssm "github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/simtest"
	"github.com/joinery/joinery/sim/ssm"
)

func TestAuthorizationAsSSMAnswers(t *testing.T) {
	worker := simtest.Worker(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ssm:GetParameter",
		"Resource":"arn:aws:ssm:us-east-1::parameter/aws/service/*"}}`)
	srv := ssm.New(ssm.Options{Guard: awsauth.NewGuard(worker), Source: func(string) (string, int64, time.Time, bool) { return "ami-1", 1, time.Now(), true }})
	url := simtest.Serve(t, srv)
	client := func(id awsauth.Identity) *sdkssm.Client {
		return simtest.Client(sdkssm.NewFromConfig, url, id.CredentialsProvider())
	}
	ctx := context.Background()
	get := func(c *sdkssm.Client, name string) error {
		_, err := c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String(name)})
		return err
	}
	if err := get(client(worker), "/aws/service/eks/x"); err != nil {
		t.Errorf("a public EKS parameter: %v", err)
	}
	if err := get(client(worker), "/team/secret"); simtest.Code(err) != "AccessDeniedException" ||
		!strings.Contains(err.Error(), "ssm:GetParameter on resource: arn:aws:ssm:us-east-1:123456789012:parameter/team/secret") {
		t.Errorf("the account's own parameter: %v", err)
	}
	if _, err := client(worker).GetParameters(ctx, &sdkssm.GetParametersInput{Names: []string{"/aws/service/eks/x"}}); simtest.Code(err) != "AccessDeniedException" {
		t.Errorf("GetParameters, not granted: %v", err)
	}
	if err := get(client(simtest.Stranger(worker)), "/aws/service/eks/x"); simtest.Code(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
}
