package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// withTerminateOptions is the activity context for terminating an instance
// and waiting until it is gone: long, heartbeating, retried until it works
// (terminating twice is harmless).
func withTerminateOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute, HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
}

// trackPhase answers the status query with *phase and returns a setter that
// also upserts the Phase search attribute (plus any extra attributes).
func trackPhase(ctx workflow.Context, phase *string) (func(string, ...temporal.SearchAttributeUpdate), error) {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (string, error) { return *phase, nil }); err != nil {
		return nil, err
	}
	return func(p string, extra ...temporal.SearchAttributeUpdate) {
		*phase = p
		_ = workflow.UpsertTypedSearchAttributes(ctx, append([]temporal.SearchAttributeUpdate{SAPhase.ValueSet(p)}, extra...)...)
	}, nil
}
