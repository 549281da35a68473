package aws

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
)

// ThrottleFunc is told of every attempt AWS refused for its rate (the
// service, e.g. "EC2", and the operation, e.g. "DescribeInstances"),
// retried ones included.
type ThrottleFunc func(service, action string)

// throttles is how the SDK tells a throttle: RequestLimitExceeded,
// Throttling, ThrottlingException, RequestThrottled, HTTP 429...
var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// IsThrottled reports whether err is (or wraps) AWS refusing a call for
// its rate. Such a call was not served: it says nothing of capacity or of
// whether an instance exists.
func IsThrottled(err error) bool {
	for err != nil {
		if throttles.IsErrorThrottle(err).Bool() {
			return true
		}
		// errors.Join (a retry that ran out of retry quota) hides its
		// parts from Unwrap() error.
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if IsThrottled(e) {
					return true
				}
			}
			return false
		}
		err = errors.Unwrap(err)
	}
	return false
}

// adaptiveRetryer is the retryer of every client Joinery builds: the SDK's
// adaptive mode (standard retries with backoff and jitter, plus a
// client-side send rate that drops on throttles and recovers after them),
// one per operation. AWS throttles each API on its own bucket, so
// DescribeInstances being throttled must not slow CreateFleet.
type adaptiveRetryer struct {
	maxAttempts int
	maxBackoff  time.Duration
	mu          sync.Mutex
	byOp        map[string]*retry.AdaptiveMode
}

var _ aws.RetryerV2 = (*adaptiveRetryer)(nil)

func newAdaptiveRetryer(maxAttempts int, maxBackoff time.Duration) *adaptiveRetryer {
	return &adaptiveRetryer{maxAttempts: maxAttempts, maxBackoff: maxBackoff, byOp: map[string]*retry.AdaptiveMode{}}
}

// mode is ctx's operation's adaptive mode.
func (r *adaptiveRetryer) mode(ctx context.Context) *retry.AdaptiveMode {
	op := awsmiddleware.GetOperationName(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.byOp[op]
	if !ok {
		m = retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) {
				so.MaxAttempts = r.maxAttempts
				if r.maxBackoff > 0 {
					so.MaxBackoff = r.maxBackoff
				}
			})
		})
		r.byOp[op] = m
	}
	return m
}

// any is an operation-independent mode for the methods given no context
// (they depend on the options only).
func (r *adaptiveRetryer) any() *retry.AdaptiveMode { return r.mode(context.Background()) }

func (r *adaptiveRetryer) IsErrorRetryable(err error) bool { return r.any().IsErrorRetryable(err) }
func (r *adaptiveRetryer) MaxAttempts() int                { return r.maxAttempts }
func (r *adaptiveRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	return r.any().RetryDelay(attempt, err)
}
func (r *adaptiveRetryer) GetRetryToken(ctx context.Context, err error) (func(error) error, error) {
	return r.mode(ctx).GetRetryToken(ctx, err)
}

// GetInitialToken is the deprecated RetryerV1 method, which the SDK does
// not call on a RetryerV2 (it calls GetAttemptToken): a no-op release, as
// the adaptive mode's own.
func (r *adaptiveRetryer) GetInitialToken() func(error) error {
	return func(error) error { return nil }
}
func (r *adaptiveRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	return r.mode(ctx).GetAttemptToken(ctx)
}

// withThrottleObserver reports each throttled attempt: it sits inside the
// SDK's retry loop (after its Retry middleware), so every attempt is seen,
// not only the call's last answer.
func withThrottleObserver(report ThrottleFunc) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("JoineryThrottled",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				if err != nil && throttles.IsErrorThrottle(err).Bool() {
					report(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx))
				}
				return out, md, err
			}), "Retry", middleware.After)
	}
}
