package aws

import (
	"context"
	"errors"
	"fmt"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
)

// Each operation has its own adaptive send rate: throttles of one API do
// not slow another, as EC2 throttles each API on its own bucket.
func TestAdaptiveModePerOperation(t *testing.T) {
	r := newAdaptiveRetryer(5, 0)
	op := func(name string) context.Context { return awsmiddleware.SetOperationName(context.Background(), name) }
	if r.mode(op("DescribeInstances")) == r.mode(op("CreateFleet")) {
		t.Fatal("DescribeInstances and CreateFleet share one adaptive mode")
	}
	first := r.mode(op("DescribeInstances"))
	if again := r.mode(op("DescribeInstances")); again != first {
		t.Fatal("one operation got two adaptive modes")
	}
	if r.MaxAttempts() != 5 {
		t.Fatalf("MaxAttempts %d, want 5", r.MaxAttempts())
	}
}

// A throttle is recognised under wrapping and inside errors.Join (what
// the SDK returns when its retry quota runs out); other errors are not.
func TestIsThrottled(t *testing.T) {
	throttle := &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "Request limit exceeded."}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{throttle, true},
		{fmt.Errorf("TerminateInstances: %w", throttle), true},
		{fmt.Errorf("call: %w", errors.Join(throttle, errors.New("retry quota exceeded"))), true},
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{&smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound"}, false},
		{&smithy.GenericAPIError{Code: "InsufficientInstanceCapacity"}, false},
		{nil, false},
	} {
		if got := IsThrottled(c.err); got != c.want {
			t.Errorf("IsThrottled(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
