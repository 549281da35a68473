package activities

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
)

// A planning activity heartbeats while it computes, so that the heartbeat
// timeout of its options, not its two-minute start-to-close timeout,
// notices a worker killed mid-plan.
func TestPulsingHeartbeatsWhileItRuns(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	plan := func(ctx context.Context, n int) (int, error) {
		time.Sleep(50 * time.Millisecond)
		return n + 1, nil
	}
	env.RegisterActivityWithOptions(pulsing(plan), activity.RegisterOptions{Name: "Plan"})
	v, err := env.ExecuteActivity("Plan", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got int
	if err := v.Get(&got); err != nil || got != 2 {
		t.Fatalf("result %d, %v", got, err)
	}
	if beats.Load() == 0 {
		t.Error("no heartbeat while the plan ran")
	}
}
