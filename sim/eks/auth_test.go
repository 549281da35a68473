package eks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkeks "github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/eks"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func TestAuthorizationAsEKSAnswers(t *testing.T) {
	worker := simtest.Worker(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"eks:DescribeCluster",
		"Resource":"arn:aws:eks:us-east-1:123456789012:cluster/mine"}}`)
	srv := eks.New(eks.Options{Guard: awsauth.NewGuard(worker), Cluster: eks.Cluster{Name: "mine", Endpoint: "https://127.0.0.1:6443", CAData: "Q0E="}})
	url := simtest.Serve(t, srv)
	describe := func(id awsauth.Identity, name string) error {
		c := simtest.Client(sdkeks.NewFromConfig, url, id.CredentialsProvider())
		_, err := c.DescribeCluster(context.Background(), &sdkeks.DescribeClusterInput{Name: aws.String(name)})
		return err
	}
	if err := describe(worker, "mine"); err != nil {
		t.Errorf("its cluster: %v", err)
	}
	if err := describe(worker, "other"); simtest.Code(err) != "AccessDeniedException" || !strings.Contains(err.Error(), "cluster/other") {
		t.Errorf("another cluster: %v", err)
	}
	if err := describe(simtest.Stranger(worker), "mine"); simtest.Code(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
}
