package controller

import (
	"context"
	"fmt"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
)

// newInterruptionPoller builds the PollInterruptionQueue activity. It is
// registered on every worker; one without Config.InterruptionQueue fails it
// for good, so a poller left over from a run with a queue ends cleanly.
func newInterruptionPoller(ctx context.Context, cfg Config, tc client.Client, pseudonym func(string) string, m *metrics.Metrics,
	throttled aws.ThrottleFunc, log *zap.Logger) (*activities.InterruptionPoller, error) {
	p := &activities.InterruptionPoller{Starter: activities.TemporalInterruptionStarter{Client: tc, Pseudonym: pseudonym}, Metrics: m,
		Log: log.Named("interruption"), DrainOnRebalance: cfg.InterruptionRebalanceDrain}
	if cfg.InterruptionQueue == "" {
		return p, nil
	}
	q, err := aws.NewQueue(ctx, aws.QueueOptions{URL: cfg.InterruptionQueue, Region: cfg.Region, Endpoint: cfg.SQSEndpoint, Observe: m.ObserveCloud,
		Throttled: throttled, Key: cfg.AWSKey})
	if err != nil {
		return nil, fmt.Errorf("interruption queue: %w", err)
	}
	p.Queue = q
	return p, nil
}

// startInterruptionPoller starts the singleton InterruptionPoller workflow,
// or joins the one already running (another worker may be polling).
func startInterruptionPoller(ctx context.Context, tc client.Client, cfg Config) error {
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.InterruptionPollerWorkflowID, TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.InterruptionPollerWorkflow, workflows.PollerInput{QueueURL: cfg.InterruptionQueue})
	if err != nil {
		return fmt.Errorf("start interruption poller: %w", err)
	}
	return nil
}
