package eks_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkeks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/eks"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func TestDescribeCluster(t *testing.T) {
	srv := eks.New(eks.Options{Cluster: eks.Cluster{Name: "joinery-local", Endpoint: "https://127.0.0.1:6443", CAData: "Q0E=", ServiceIPv4CIDR: "10.0.0.0/24", Version: "1.37"}})
	srv.SetRecording(true)
	c := simtest.Client(sdkeks.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	out, err := c.DescribeCluster(context.Background(), &sdkeks.DescribeClusterInput{Name: aws.String("joinery-local")})
	if err != nil {
		t.Fatal(err)
	}
	cl := out.Cluster
	if aws.ToString(cl.Endpoint) != "https://127.0.0.1:6443" || aws.ToString(cl.CertificateAuthority.Data) != "Q0E=" ||
		aws.ToString(cl.KubernetesNetworkConfig.ServiceIpv4Cidr) != "10.0.0.0/24" || cl.Status != "ACTIVE" || aws.ToString(cl.Version) != "1.37" {
		t.Errorf("%+v", cl)
	}
	_, err = c.DescribeCluster(context.Background(), &sdkeks.DescribeClusterInput{Name: aws.String("other")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ResourceNotFoundException" || ae.ErrorMessage() != "No cluster found for name: other." {
		t.Errorf("other: %v", err)
	}
	if r := srv.Requests(); len(r) != 2 || r[0].Operation != "DescribeCluster" {
		t.Errorf("recorded %+v", r)
	}
}
