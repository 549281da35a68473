// Package simtest holds what the local AWS endpoints' tests share: an
// endpoint served for a test, an SDK client of it, the identities the
// authorization tests sign as, and the checks of an error answer. Tests
// of several packages use it, so it is not a _test.go file.
package simtest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Endpoint is a local AWS endpoint (sim/ec2, sim/iam, ...).
type Endpoint interface {
	Start(addr string) (baseURL string, stop func(), err error)
}

// Serve serves e on a loopback port until the test ends and returns its
// base URL.
func Serve(t testing.TB, e Endpoint) string {
	t.Helper()
	url, stop, err := e.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// AnyKey signs for an endpoint without a guard, which takes any key.
var AnyKey = credentials.NewStaticCredentialsProvider("a", "b", "")

// Client is a client of the endpoint at url, made with the service's
// NewFromConfig (sdkiam.NewFromConfig, ...): us-east-1, signing with
// creds, and no retries, so the test sees every answer.
func Client[C, O any](newFromConfig func(aws.Config, ...func(*O)) *C, url string, creds aws.CredentialsProvider) *C {
	return newFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: creds,
		Retryer: func() aws.Retryer { return aws.NopRetryer{} }})
}
