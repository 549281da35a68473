package workflows

import (
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
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
// instance and kind of event. A worker that dies is replaced after the heartbeat
// timeout, on any worker.
func InterruptionPoller(ctx workflow.Context, in PollerInput) error {
	if in.RunFor <= 0 {
		in.RunFor = defaultPollRunFor
	}
	poll := workflow.WithActivityOptions(ctx, queuePoll(in.RunFor))
	for i := 0; i < pollerRunsPerHistory; i++ {
		var r PollResult
		if err := workflow.ExecuteActivity(poll, ActivityPollInterruptionQueue, in).Get(ctx, &r); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, InterruptionPollerWorkflow, in)
}

// Interruption handles one interruption event for one instance (id
// interruption/<instance>/<kind>, so a redelivered message is a no-op, and
// the poller starts none for an event a stronger one superseded):
// find the instance's NodeClaim and Node, then carry out what
// planInterruption decides: for a spot interruption warning mark the
// (type, zone, spot) offering unavailable so the replacement is bought
// elsewhere; record an Event and the action metric; then, unless the event
// asks for nothing (a rebalance recommendation, by default), hand the node
// to a DrainAndReplace child with Interruption set: the replacement is
// launched first and the drain starts at once, do-not-disrupt pods are
// evicted too, budgets do not apply, and pods still there at the end of
// the notice minus their grace period are deleted.
func Interruption(ctx workflow.Context, in InterruptionInput) (InterruptionResult, error) {
	res := InterruptionResult{}
	phase, err := trackPhase(ctx, PhaseChecking)
	if err != nil {
		return res, err
	}
	phase.Set(PhaseChecking, identifying(in.Private, SAInstanceID.ValueSet(in.InstanceID))...)
	short := workflow.WithActivityOptions(ctx, lookupCall())

	var tgt InterruptionTarget
	if err := workflow.ExecuteActivity(short, ActivityLookupInterruptedInstance, in.InstanceID).Get(ctx, &tgt); err != nil {
		return res, err
	}
	res.NodeName, res.NodeClaim = tgt.NodeName, tgt.NodeClaim
	note := func(action, msg string) {
		logFailure(ctx, "recording the interruption", workflow.ExecuteActivity(short, ActivityRecordInterruption, InterruptionNote{
			Kind: in.Kind, Action: action, EventID: in.EventID, InstanceID: in.InstanceID,
			NodeName: tgt.NodeName, NodeClaim: tgt.NodeClaim, Message: msg,
		}).Get(ctx, nil))
	}
	plan := planInterruption(in, tgt)
	if plan.Step != interruptionUnknown {
		upsert(ctx, targetAttributes(in, tgt)...)
	}
	// The pool EC2 is taking spot capacity back from is the last place to
	// buy the replacement: mark it before the replacement is planned.
	if plan.MarkUnavailable != nil {
		if err := workflow.ExecuteActivity(short, ActivityMarkOfferingUnavailable, *plan.MarkUnavailable).Get(ctx, nil); err != nil {
			return res, err
		}
	}
	switch plan.Step {
	case interruptionUnknown, interruptionSkip:
		res.Action, res.Outcome, res.Why = ActionNoAction, PhaseSkipped, plan.Why
		note(ActionNoAction, plan.Note)
		phase.Set(PhaseSkipped)
		return res, nil
	case interruptionInform:
		res.Action, res.Outcome = ActionNoAction, PhaseDone
		note(ActionNoAction, plan.Note)
		phase.Set(PhaseDone)
		return res, nil
	case interruptionTerminate:
		// Launched but not registered yet: end the NodeClaim so its pods
		// are provisioned on other capacity.
		res.Action = ActionTerminate
		note(ActionTerminate, plan.Note)
		phase.Set(PhaseTerminating)
		if err := workflow.ExecuteActivity(withTerminateOptions(ctx), ActivityTerminateInstance, TerminateRequest{
			NodeClaim: tgt.NodeClaim, InstanceID: in.InstanceID, Reason: "interrupted: " + in.Kind,
		}).Get(ctx, nil); err != nil {
			return res, err
		}
		res.Outcome = PhaseDone
		phase.Set(PhaseDone)
		return res, nil
	}
	res.Action = ActionCordonAndDrain
	note(ActionCordonAndDrain, plan.Note)
	phase.Set(PhaseInterrupted)
	return runInterruptionDrain(ctx, in, tgt, res, phase)
}

// runInterruptionDrain runs the node's DrainAndReplace child
// (disrupt/interruption/<node or its pseudonym>).
func runInterruptionDrain(ctx workflow.Context, in InterruptionInput, tgt InterruptionTarget, res InterruptionResult, phase *phaseTracker) (InterruptionResult, error) {
	ref := tgt.NodeName
	if in.Private {
		ref = tgt.NodeRef
		if ref == "" {
			// Not expected (the lookup sets it when encryption is on); the
			// NodeClaim name is in clear anyway.
			ref = "nodeclaim-" + tgt.NodeClaim
		}
	}
	cctx := workflow.WithChildOptions(ctx, drainChild(saga.ReasonInterruption, ref, append(
		identifying(in.Private, SANodeName.ValueSet(tgt.NodeName), SAInstanceID.ValueSet(in.InstanceID)),
		SANodeClaim.ValueSet(tgt.NodeClaim), SAPhase.ValueSet(PhaseChecking))...))
	var dr DisruptResult
	err := workflow.ExecuteChildWorkflow(cctx, DrainAndReplaceWorkflow, DisruptInput{
		NodeName: tgt.NodeName, Reason: saga.ReasonInterruption, Replace: true, Interruption: true, SkipBudgets: true,
		Deadline: in.NoticeEnd, Private: in.Private,
	}).Get(ctx, &dr)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		res.Outcome, res.Why = PhaseSkipped, "an interruption drain of "+tgt.NodeName+" is already running"
		noticeRunningDrain(ctx, DisruptWorkflowID(saga.ReasonInterruption, ref), in)
		phase.Set(PhaseSkipped)
		return res, nil
	}
	res.Disrupt = &dr
	if err != nil {
		phase.Set(PhaseFailed)
		return res, err
	}
	res.Outcome = dr.Outcome
	phase.Set(PhaseDone)
	return res, nil
}

// VersionNoticeRunningDrain gates handing an interruption's notice end to
// the node's drain already running (a spot warning after a rebalance
// recommendation's drain), where before it was only skipped.
const VersionNoticeRunningDrain = "notice-running-drain"

// noticeRunningDrain tells the running drain id when the node goes away
// (nothing when the event names no end). A drain that has just ended
// cannot be told: that is logged, not failed.
func noticeRunningDrain(ctx workflow.Context, id string, in InterruptionInput) {
	if in.NoticeEnd.IsZero() || workflow.GetVersion(ctx, VersionNoticeRunningDrain, workflow.DefaultVersion, 1) < 1 {
		return
	}
	err := workflow.SignalExternalWorkflow(ctx, id, "", SignalNoticeEnd, NoticeEnd{Deadline: in.NoticeEnd, Kind: in.Kind}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Info("the running drain could not be told the notice end (it may have ended)", "workflow", id, "error", err)
	}
}

// targetAttributes are the search attributes of a known interrupted
// instance: its NodeClaim, and what is known of its node (the node name
// not when private).
func targetAttributes(in InterruptionInput, tgt InterruptionTarget) []temporal.SearchAttributeUpdate {
	updates := []temporal.SearchAttributeUpdate{SANodeClaim.ValueSet(tgt.NodeClaim)}
	for _, kv := range []struct {
		k temporal.SearchAttributeKeyKeyword
		v string
	}{{SANodeName, tgt.NodeName}, {SANodePool, tgt.NodePool}, {SAInstanceType, tgt.InstanceType}, {SAZone, tgt.Zone}, {SACapacityType, tgt.CapacityType}} {
		if kv.v != "" && !(in.Private && kv.k == SANodeName) {
			updates = append(updates, kv.k.ValueSet(kv.v))
		}
	}
	return updates
}

// interruptionStep is what an Interruption does about its instance.
type interruptionStep string

const (
	// interruptionUnknown: the instance is no NodeClaim of this cluster (skipped).
	interruptionUnknown interruptionStep = "unknown"
	// interruptionInform: the event asks for nothing (an Event only).
	interruptionInform interruptionStep = "inform"
	// interruptionSkip: the node is already being disrupted.
	interruptionSkip interruptionStep = "skip"
	// interruptionTerminate: no Node yet; the NodeClaim is terminated.
	interruptionTerminate interruptionStep = "terminate"
	// interruptionDrain: cordon, replace and drain (DrainAndReplace).
	interruptionDrain interruptionStep = "drain"
)

// interruptionPlan is planInterruption's answer.
type interruptionPlan struct {
	Step interruptionStep
	// MarkUnavailable, if set, is the spot offering to mark unavailable
	// before anything else (so the replacement is bought elsewhere).
	MarkUnavailable *saga.Offering
	Why             string // why it is skipped
	Note            string // the Event's message
}

// planInterruption decides what to do about an interrupted instance
// (pure: the workflow carries it out).
func planInterruption(in InterruptionInput, tgt InterruptionTarget) interruptionPlan {
	if tgt.NodeClaim == "" {
		why := "instance " + in.InstanceID + " belongs to no NodeClaim of this cluster"
		return interruptionPlan{Step: interruptionUnknown, Why: why, Note: describeInterruption(in) + ": " + why}
	}
	drains := interruptionDrains(in)
	var p interruptionPlan
	if drains && (in.Kind == saga.KindSpotInterrupted || in.Kind == saga.KindRebalanceRecommendation) && tgt.InstanceType != "" && tgt.Zone != "" {
		p.MarkUnavailable = &saga.Offering{InstanceType: tgt.InstanceType, Zone: tgt.Zone, CapacityType: "spot"}
	}
	// The reservation its owner is taking back has nothing left to
	// launch into (Karpenter marks the reservation unavailable).
	if in.Kind == saga.KindCapacityReservationInterrupted && tgt.CapacityReservationID != "" {
		p.MarkUnavailable = &saga.Offering{InstanceType: tgt.InstanceType, Zone: tgt.Zone, CapacityType: "reserved",
			ReservationID: tgt.CapacityReservationID}
	}
	switch {
	case !drains:
		p.Step = interruptionInform
		p.Note = describeInterruption(in) + ": no disruption (rebalance recommendations only inform unless --interruption-rebalance-drain is set)"
	case tgt.DisruptingFor != "":
		p.Step, p.Why = interruptionSkip, "node is already being disrupted ("+tgt.DisruptingFor+")"
		p.Note = describeInterruption(in) + ": " + p.Why
	case tgt.NodeName == "":
		p.Step = interruptionTerminate
		p.Note = describeInterruption(in) + ": the instance has no Node yet; terminating its NodeClaim"
	default:
		p.Step = interruptionDrain
		p.Note = describeInterruption(in) + ": cordon, replace and drain"
		if !in.NoticeEnd.IsZero() {
			p.Note += fmt.Sprintf(" before %s", in.NoticeEnd.UTC().Format(time.RFC3339))
		}
	}
	return p
}

// interruptionDrains: every kind but a rebalance recommendation asks for
// the node to go, unless the operator opted in.
func interruptionDrains(in InterruptionInput) bool {
	switch in.Kind {
	case saga.KindSpotInterrupted, saga.KindScheduledChange, saga.KindInstanceStopped, saga.KindInstanceTerminated,
		saga.KindCapacityReservationInterrupted, saga.KindCapacityBlockExpiring:
		return true
	case saga.KindRebalanceRecommendation:
		return in.DrainOnRebalance
	}
	return false
}

func describeInterruption(in InterruptionInput) string {
	switch in.Kind {
	case saga.KindSpotInterrupted:
		return "spot interruption warning (instance-action " + in.Action + ")"
	case saga.KindRebalanceRecommendation:
		return "rebalance recommendation"
	case saga.KindScheduledChange:
		return "scheduled maintenance (AWS Health)"
	case saga.KindCapacityReservationInterrupted:
		return "capacity reservation interruption warning (instance-action " + in.Action + ")"
	case saga.KindCapacityBlockExpiring:
		return "capacity block ending"
	case saga.KindInstanceStopped, saga.KindInstanceTerminated:
		return "instance " + in.State
	}
	return in.Kind
}
