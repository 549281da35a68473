package ssm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/ssm"
)

func TestAuthorizationAsSSMAnswers(t *testing.T) {
	worker := awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w",
		Policies: []*policy.Policy{policy.MustParse("w", []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ssm:GetParameter",
		"Resource":"arn:aws:ssm:us-east-1::parameter/aws/service/*"}}`))}}
	srv := ssm.New(ssm.Options{Guard: awsauth.NewGuard(worker), Source: func(string) (string, int64, time.Time, bool) { return "ami-1", 1, time.Now(), true }})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := func(id awsauth.Identity) *sdkssm.Client {
		return sdkssm.New(sdkssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}, Credentials: id.CredentialsProvider()})
	}
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return ""
	}
	ctx := context.Background()
	get := func(c *sdkssm.Client, name string) error {
		_, err := c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String(name)})
		return err
	}
	if err := get(client(worker), "/aws/service/eks/x"); err != nil {
		t.Errorf("a public EKS parameter: %v", err)
	}
	if err := get(client(worker), "/team/secret"); code(err) != "AccessDeniedException" ||
		!strings.Contains(err.Error(), "ssm:GetParameter on resource: arn:aws:ssm:us-east-1:123456789012:parameter/team/secret") {
		t.Errorf("the account's own parameter: %v", err)
	}
	if _, err := client(worker).GetParameters(ctx, &sdkssm.GetParametersInput{Names: []string{"/aws/service/eks/x"}}); code(err) != "AccessDeniedException" {
		t.Errorf("GetParameters, not granted: %v", err)
	}
	stranger := worker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	if err := get(client(stranger), "/aws/service/eks/x"); code(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
}
