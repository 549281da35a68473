package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Poller pacing: one poll activity runs RunFor, then the workflow runs the
// next; after pollerRunsPerHistory runs it continues as new.
const (
	defaultPollRunFor    = 5 * time.Minute
	pollerRunsPerHistory = 100
	// PollHeartbeatTimeout: a worker that dies while polling is replaced
	// within this long (the activity heartbeats at least every 5 s).
	PollHeartbeatTimeout = 20 * time.Second
)

// InterruptionPoller is the singleton (id interruption-poller) that keeps
// one PollInterruptionQueue activity running: the activity long-polls the
// SQS queue, heartbeating, and starts one Interruption workflow per
// instance and event. A worker that dies is replaced after the heartbeat
// timeout, on any worker.
func InterruptionPoller(ctx workflow.Context, in PollerInput) error {
	if in.RunFor <= 0 {
		in.RunFor = defaultPollRunFor
	}
	poll := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: in.RunFor + time.Minute, HeartbeatTimeout: PollHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{ErrNoInterruptionQueue}},
	})
	for i := 0; i < pollerRunsPerHistory; i++ {
		var r PollResult
		if err := workflow.ExecuteActivity(poll, ActivityPollInterruptionQueue, in).Get(ctx, &r); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, InterruptionPollerWorkflow, in)
}

// Interruption handles one interruption event for one instance (id
// interruption/<instance>/<event>, so a redelivered message is a no-op):
// find the instance's NodeClaim and Node; for a spot interruption warning
// mark the (type, zone, spot) offering unavailable so the replacement is
// bought elsewhere; record an Event and the action metric; then, unless
// the event asks for nothing (a rebalance recommendation, by default),
// hand the node to a DrainAndReplace child with Interruption set: the
// replacement is launched first and the drain starts at once, do-not-disrupt
// pods are evicted too, budgets do not apply, and pods still there at the
// end of the notice minus their grace period are deleted.
func Interruption(ctx workflow.Context, in InterruptionInput) (InterruptionResult, error) {
	res := InterruptionResult{}
	phase := PhaseChecking
	setPhase, err := trackPhase(ctx, &phase)
	if err != nil {
		return res, err
	}
	setPhase(PhaseChecking, identifying(in.Private, SAInstanceID.ValueSet(in.InstanceID))...)
	short := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second},
	})

	var tgt InterruptionTarget
	if err := workflow.ExecuteActivity(short, ActivityLookupInterruptedInstance, in.InstanceID).Get(ctx, &tgt); err != nil {
		return res, err
	}
	res.NodeName, res.NodeClaim = tgt.NodeName, tgt.NodeClaim
	note := func(action, msg string) {
		_ = workflow.ExecuteActivity(short, ActivityRecordInterruption, InterruptionNote{
			Kind: in.Kind, Action: action, EventID: in.EventID, InstanceID: in.InstanceID,
			NodeName: tgt.NodeName, NodeClaim: tgt.NodeClaim, Message: msg,
		}).Get(ctx, nil)
	}
	skip := func(why string) (InterruptionResult, error) {
		res.Action, res.Outcome, res.Why = ActionNoAction, PhaseSkipped, why
		note(ActionNoAction, describeInterruption(in)+": "+why)
		setPhase(PhaseSkipped)
		return res, nil
	}
	if tgt.NodeClaim == "" {
		return skip("instance " + in.InstanceID + " belongs to no NodeClaim of this cluster")
	}
	updates := []temporal.SearchAttributeUpdate{SANodeClaim.ValueSet(tgt.NodeClaim)}
	for _, kv := range []struct {
		k temporal.SearchAttributeKeyKeyword
		v string
	}{{SANodeName, tgt.NodeName}, {SANodePool, tgt.NodePool}, {SAInstanceType, tgt.InstanceType}, {SAZone, tgt.Zone}, {SACapacityType, tgt.CapacityType}} {
		if kv.v != "" && !(in.Private && kv.k == SANodeName) {
			updates = append(updates, kv.k.ValueSet(kv.v))
		}
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, updates...)

	drain := interruptionDrains(in)
	// The pool EC2 is taking spot capacity back from is the last place to
	// buy the replacement: mark it before the replacement is planned.
	if drain && (in.Kind == KindSpotInterrupted || in.Kind == KindRebalanceRecommendation) && tgt.InstanceType != "" && tgt.Zone != "" {
		off := Offering{InstanceType: tgt.InstanceType, Zone: tgt.Zone, CapacityType: "spot"}
		if err := workflow.ExecuteActivity(short, ActivityMarkOfferingUnavailable, off).Get(ctx, nil); err != nil {
			return res, err
		}
	}
	if !drain {
		res.Action, res.Outcome = ActionNoAction, PhaseDone
		note(ActionNoAction, describeInterruption(in)+": no disruption (rebalance recommendations only inform unless --interruption-rebalance-drain is set)")
		setPhase(PhaseDone)
		return res, nil
	}
	if tgt.DisruptingFor != "" {
		return skip("node is already being disrupted (" + tgt.DisruptingFor + ")")
	}

	if tgt.NodeName == "" {
		// Launched but not registered yet: end the NodeClaim so its pods
		// are provisioned on other capacity.
		res.Action = ActionTerminate
		note(ActionTerminate, describeInterruption(in)+": the instance has no Node yet; terminating its NodeClaim")
		setPhase(PhaseTerminating)
		if err := workflow.ExecuteActivity(withTerminateOptions(ctx), ActivityTerminateInstance, TerminateRequest{
			NodeClaim: tgt.NodeClaim, InstanceID: in.InstanceID, Reason: "interrupted: " + in.Kind,
		}).Get(ctx, nil); err != nil {
			return res, err
		}
		res.Outcome = PhaseDone
		setPhase(PhaseDone)
		return res, nil
	}

	res.Action = ActionCordonAndDrain
	msg := describeInterruption(in) + ": cordon, replace and drain"
	if !in.NoticeEnd.IsZero() {
		msg += fmt.Sprintf(" before %s", in.NoticeEnd.UTC().Format(time.RFC3339))
	}
	note(ActionCordonAndDrain, msg)
	setPhase(PhaseInterrupted)
	ref := tgt.NodeName
	if in.Private {
		ref = tgt.NodeRef
		if ref == "" {
			// Not expected (the lookup sets it when encryption is on); the
			// NodeClaim name is in clear anyway.
			ref = "nodeclaim-" + tgt.NodeClaim
		}
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: DisruptWorkflowID(ReasonInterruption, ref), TaskQueue: TaskQueue,
		// The drain outlives this workflow if it is terminated.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(append(identifying(in.Private, SANodeName.ValueSet(tgt.NodeName), SAInstanceID.ValueSet(in.InstanceID)),
			SANodeClaim.ValueSet(tgt.NodeClaim), SAPhase.ValueSet(PhaseChecking))...),
	})
	var dr DisruptResult
	err = workflow.ExecuteChildWorkflow(cctx, DrainAndReplaceWorkflow, DisruptInput{
		NodeName: tgt.NodeName, Reason: ReasonInterruption, Replace: true, Interruption: true, SkipBudgets: true,
		Deadline: in.NoticeEnd, Private: in.Private,
	}).Get(ctx, &dr)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		res.Outcome, res.Why = PhaseSkipped, "an interruption drain of "+tgt.NodeName+" is already running"
		setPhase(PhaseSkipped)
		return res, nil
	}
	res.Disrupt = &dr
	if err != nil {
		setPhase(PhaseFailed)
		return res, err
	}
	res.Outcome = dr.Outcome
	setPhase(PhaseDone)
	return res, nil
}

// interruptionDrains: every kind but a rebalance recommendation asks for
// the node to go, unless the operator opted in.
func interruptionDrains(in InterruptionInput) bool {
	switch in.Kind {
	case KindSpotInterrupted, KindScheduledChange, KindInstanceStopped, KindInstanceTerminated:
		return true
	case KindRebalanceRecommendation:
		return in.DrainOnRebalance
	}
	return false
}

func describeInterruption(in InterruptionInput) string {
	switch in.Kind {
	case KindSpotInterrupted:
		return "spot interruption warning (instance-action " + in.Action + ")"
	case KindRebalanceRecommendation:
		return "rebalance recommendation"
	case KindScheduledChange:
		return "scheduled maintenance (AWS Health)"
	case KindInstanceStopped, KindInstanceTerminated:
		return "instance " + in.State
	}
	return in.Kind
}
