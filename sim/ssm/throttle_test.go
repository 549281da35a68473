package ssm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/ssm"
)

// Past Parameter Store's throughput (scaled to 2 a second here) a read
// answers ThrottlingException, HTTP 400, which the SDK retries as a
// throttle.
func TestThrottlingException(t *testing.T) {
	srv := ssm.New(ssm.Options{ThrottleScale: 0.05})
	srv.Put("/p", "v")
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := sdkssm.New(sdkssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String("/p")}); err != nil {
			t.Fatalf("read %d within the throughput: %v", i+1, err)
		}
	}
	_, err = c.GetParameters(ctx, &sdkssm.GetParametersInput{Names: []string{"/p"}})
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ThrottlingException" || ae.ErrorMessage() != "Rate exceeded" ||
		!errors.As(err, &re) || re.HTTPStatusCode() != http.StatusBadRequest {
		t.Fatalf("third read in the second: %v, want ThrottlingException (400) Rate exceeded", err)
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the SDK does not take %v for a throttle", err)
	}
}
