package aws

import (
	"context"
	"errors"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// ObserveFunc receives every AWS API call once it finished (retries
// included): the operation name (e.g. "CreateFleet"), the error code ("" on
// success, e.g. "RequestLimitExceeded", "InsufficientInstanceCapacity") and
// the duration in seconds.
type ObserveFunc func(api, code string, seconds float64)

// withObserver adds a middleware reporting each call to observe.
func withObserver(observe ObserveFunc) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("JoineryObserve",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				start := time.Now()
				out, md, err := next.HandleInitialize(ctx, in)
				code := ""
				if err != nil {
					code = "Unknown"
					var ae smithy.APIError
					if errors.As(err, &ae) {
						code = ae.ErrorCode()
					}
				}
				observe(awsmiddleware.GetOperationName(ctx), code, time.Since(start).Seconds())
				return out, md, err
			}), middleware.After)
	}
}

// observers are the middlewares reporting calls to observe and throttled
// attempts to throttled (each may be nil).
func observers(observe ObserveFunc, throttled ThrottleFunc) []func(*middleware.Stack) error {
	var out []func(*middleware.Stack) error
	if observe != nil {
		out = append(out, withObserver(observe))
	}
	if throttled != nil {
		out = append(out, withThrottleObserver(throttled))
	}
	return out
}
