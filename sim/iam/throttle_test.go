package iam_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/iam"
)

// Past the account's bucket (scaled to 1 call here) IAM answers
// Throttling, HTTP 400, which the SDK retries as a throttle.
func TestThrottling(t *testing.T) {
	srv := iam.New(iam.Options{ThrottleScale: 0.05})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := sdkiam.New(sdkiam.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	ctx := context.Background()
	in := &sdkiam.GetRoleInput{RoleName: aws.String(iam.DefaultRole)}
	if _, err := c.GetRole(ctx, in); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err = c.GetRole(ctx, in)
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || ae.ErrorCode() != "Throttling" || ae.ErrorMessage() != "Rate exceeded" ||
		!errors.As(err, &re) || re.HTTPStatusCode() != http.StatusBadRequest {
		t.Fatalf("second call in the second: %v, want Throttling (400) Rate exceeded", err)
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the SDK does not take %v for a throttle", err)
	}
}
