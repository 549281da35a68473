package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activity option profiles: every activity a workflow runs is scheduled
// with one of these (workflow.WithActivityOptions(ctx, profile)). Options
// are not part of a history's replay matching, but they are what an
// activity gets: change them deliberately.

// heartbeat is the heartbeat timeout of every long-running activity but
// the interruption poll (PollHeartbeatTimeout).
const heartbeat = 10 * time.Second

// backoff retries from 1 s, doubling up to max, never giving up on errors
// other than the nonRetryable types.
func backoff(max time.Duration, nonRetryable ...string) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: max, NonRetryableErrorTypes: nonRetryable}
}

// shortCall is one Kubernetes or EC2 call (a minute each), retried with
// backoff up to 30 s.
func shortCall(nonRetryable ...string) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: backoff(30*time.Second, nonRetryable...)}
}

// launchCall is the NodeClaim saga's short call: retried for five
// minutes, whatever the number of attempts, and no retry of insufficient
// capacity (the saga tries other offerings) or a deleted NodeClaim. A
// launch is several EC2 calls (its instance, subnets, templates,
// CreateFleet, idempotent by client token): it heartbeats, so one lost
// with its worker is retried after the heartbeat timeout, not after the
// minute; a count of attempts would fail a launch whose workers keep dying.
func launchCall() workflow.ActivityOptions {
	o := shortCall(ErrInsufficientCapacity, ErrNodeClaimGone)
	o.ScheduleToCloseTimeout = launchRetryWindow
	o.HeartbeatTimeout = heartbeat
	return o
}

// launchRetryWindow bounds every attempt of one NodeClaim saga call together.
const launchRetryWindow = 5 * time.Minute

// lookupCall is the interruption's short call, retried with backoff up to
// 10 s: the notice is two minutes.
func lookupCall() workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: backoff(10 * time.Second)}
}

// planCall is a decision over the whole cluster (a plan, a consolidation
// decision, a garbage-collection pass): two minutes, a few attempts (the
// next pass tries again), heartbeating so that a worker killed mid-plan is
// noticed within the heartbeat timeout, not the two minutes.
func planCall(attempts int32) workflow.ActivityOptions {
	o := workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: heartbeat, RetryPolicy: backoff(30 * time.Second)}
	o.RetryPolicy.MaximumAttempts = attempts
	return o
}

// drainPass is one drain pass: short, so a worker that dies mid-pass is
// noticed within 30 s.
func drainPass() workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: backoff(30 * time.Second)}
}

// untilGone waits, heartbeating, until an instance or NodeClaim is gone
// (for at most d per attempt), retried until it works: terminating twice
// is harmless.
func untilGone(d time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: d, HeartbeatTimeout: heartbeat, RetryPolicy: backoff(time.Minute)}
}

// terminating is the profile of TerminateInstance: five minutes a try.
func terminating() workflow.ActivityOptions { return untilGone(5 * time.Minute) }

// untilReady waits, heartbeating, for a node to become Ready (for at most
// d), polling from 1 s up to every 10 s (the server's default backoff).
func untilReady(d time.Duration, nonRetryable ...string) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: d, HeartbeatTimeout: heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, NonRetryableErrorTypes: nonRetryable}}
}

// volumesDetached waits, heartbeating, for d (the grace deadline) plus a minute.
func volumesDetached(d time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: d + time.Minute, HeartbeatTimeout: heartbeat, RetryPolicy: backoff(30 * time.Second)}
}

// queuePoll is one long poll of the interruption queue, runFor long.
func queuePoll(runFor time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: runFor + time.Minute, HeartbeatTimeout: PollHeartbeatTimeout,
		RetryPolicy: backoff(30*time.Second, ErrNoInterruptionQueue)}
}

// withTerminateOptions is the activity context for terminating an instance.
func withTerminateOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, terminating())
}

// Child workflow profiles.

// nodeClaimChild starts a NodeClaim's lifecycle (nodeclaim/<name>),
// outliving its parent.
func nodeClaimChild(nc NodeClaimInput) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID: NodeClaimWorkflowID(nc.Name), TaskQueue: TaskQueue,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SANodeClaim.ValueSet(nc.Name), SANodePool.ValueSet(nc.NodePool), SAPhase.ValueSet(PhaseLaunching)),
	}
}

// drainChild starts a DrainAndReplace (disrupt/<reason>/<ref>) with search
// attributes sa, outliving its parent (the drain goes on if the parent is
// terminated).
func drainChild(reason, ref string, sa ...temporal.SearchAttributeUpdate) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID: DisruptWorkflowID(reason, ref), TaskQueue: TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
	}
}
