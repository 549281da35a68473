package eks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkeks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/eks"
)

func TestAuthorizationAsEKSAnswers(t *testing.T) {
	worker := awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w",
		Policies: []*policy.Policy{policy.MustParse("w", []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"eks:DescribeCluster",
		"Resource":"arn:aws:eks:us-east-1:123456789012:cluster/mine"}}`))}}
	srv := eks.New(eks.Options{Guard: awsauth.NewGuard(worker), Cluster: eks.Cluster{Name: "mine", Endpoint: "https://127.0.0.1:6443", CAData: "Q0E="}})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	describe := func(id awsauth.Identity, name string) error {
		c := sdkeks.New(sdkeks.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}, Credentials: id.CredentialsProvider()})
		_, err := c.DescribeCluster(context.Background(), &sdkeks.DescribeClusterInput{Name: aws.String(name)})
		return err
	}
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return ""
	}
	if err := describe(worker, "mine"); err != nil {
		t.Errorf("its cluster: %v", err)
	}
	if err := describe(worker, "other"); code(err) != "AccessDeniedException" || !strings.Contains(err.Error(), "cluster/other") {
		t.Errorf("another cluster: %v", err)
	}
	stranger := worker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	if err := describe(stranger, "mine"); code(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
}
