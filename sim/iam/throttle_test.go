package iam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/sim/internal/simtest"
)

// Past the account's bucket (scaled to 1 call here) IAM answers
// Throttling, HTTP 400, which the SDK retries as a throttle.
func TestThrottling(t *testing.T) {
	srv := iam.New(iam.Options{ThrottleScale: 0.05})
	c := simtest.Client(sdkiam.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	ctx := context.Background()
	in := &sdkiam.GetRoleInput{RoleName: aws.String(iam.DefaultRole)}
	if _, err := c.GetRole(ctx, in); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := c.GetRole(ctx, in)
	simtest.WantThrottle(t, err, "second call in the second", "Throttling", http.StatusBadRequest, "Rate exceeded")
}
