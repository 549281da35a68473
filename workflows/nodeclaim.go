package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The NodeClaim saga's names.
const (
	NodeClaimWorkflow = "NodeClaim"

	ActivityLaunchInstance  = "LaunchInstance"
	ActivityMarkLaunched    = "MarkNodeClaimLaunched"
	ActivityWaitForNode     = "WaitForNodeReady"
	ActivityDeleteNodeClaim = "DeleteNodeClaim"

	// SignalTerminate (payload: the reason): the node has been drained (or
	// collected); terminate its instance.
	SignalTerminate = "terminate"
	// SignalDeleted (payload DeletionNotice): the NodeClaim or its Node
	// was deleted; the workflow runs the node's termination.
	SignalDeleted = "deleted"
)

// NodeClaimWorkflowID is the workflow id of a NodeClaim's lifecycle.
func NodeClaimWorkflowID(name string) string { return "nodeclaim/" + name }

// DefaultRegistrationTTL is how long an instance may take to become a Ready,
// initialized Node before it is terminated.
const DefaultRegistrationTTL = 15 * time.Minute

// NodeClaim is one node's whole life: launch (CreateFleet, falling back
// through offerings on insufficient capacity) -> registered -> initialized
// (Ready) -> serving until told to terminate -> terminated. Compensation: an
// instance whose Node is not Ready within the registration TTL is
// terminated and the NodeClaim deleted, so its pods are provisioned again.
func NodeClaim(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
	st := NodeClaimStatus{Phase: PhaseLaunching}
	// Version 1: a NodeClaim deleted before launch has its finalizer
	// removed; one deleted while launching or registering runs the
	// termination (terminateNode) instead of the registration-TTL
	// compensation.
	finalizers := workflow.GetVersion(ctx, VersionFinalizerTermination, workflow.DefaultVersion, 1) >= 1
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (NodeClaimStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	phase := nodePhase(ctx, &st.Phase)
	phase.Set(PhaseLaunching, SANodeClaim.ValueSet(in.Name), SANodePool.ValueSet(in.NodePool))
	short := workflow.WithActivityOptions(ctx, launchCall())
	event := nodeEvents(ctx, short, EventRequest{NodeClaim: in.Name})
	fail := func(msg string, cause error) (NodeClaimStatus, error) {
		st.Failure = msg
		phase.Set(PhaseFailed)
		event(EventWarning, "NodeClaimFailed", msg)
		// Deleting the NodeClaim releases the pods nominated to it.
		logFailure(ctx, "compensation: deleting the failed NodeClaim",
			workflow.ExecuteActivity(short, ActivityDeleteNodeClaim, TerminateRequest{NodeClaim: in.Name, Reason: msg}).Get(ctx, nil), "nodeclaim", in.Name)
		return st, temporal.NewNonRetryableApplicationError(msg, ErrNodeClaimFailed, cause)
	}

	inst, err := launch(ctx, short, in, &st, event)
	if err != nil {
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == ErrNodeClaimGone {
			if finalizers {
				// No instance: release the deleted NodeClaim.
				if err := workflow.ExecuteActivity(short, ActivityRemoveFinalizers, TerminateRequest{NodeClaim: in.Name, Reason: "deleted before launch"}).Get(ctx, nil); err != nil {
					return st, err
				}
			}
			phase.Set(PhaseTerminated)
			return st, nil
		}
		return fail(fmt.Sprintf("launch failed: %v", err), err)
	}
	st.Instance = inst
	phase.Set(PhaseLaunched, append(identifying(in.Private, SAInstanceID.ValueSet(inst.ID)), SAInstanceType.ValueSet(inst.InstanceType),
		SAZone.ValueSet(inst.Zone), SACapacityType.ValueSet(inst.CapacityType))...)
	ended := func(err error) bool {
		var app *temporal.ApplicationError
		return finalizers && errors.As(err, &app) && app.Type() == ErrNodeClaimGone
	}
	if err := workflow.ExecuteActivity(short, ActivityMarkLaunched, NodeClaimLaunched{NodeClaim: in.Name, Instance: inst}).Get(ctx, nil); err != nil {
		if ended(err) {
			return deleted(ctx, in, &st, inst, "", phase)
		}
		return terminateAfterFailure(ctx, short, in, &st, phase, inst, "LaunchRecordFailed", "record launch", err)
	}

	ttl := in.RegistrationTTL
	if ttl <= 0 {
		ttl = DefaultRegistrationTTL
	}
	waitOpts := untilReady(ttl, ErrNodeClaimGone)
	waitOpts.ScheduleToCloseTimeout = ttl // the registration TTL is for every attempt together
	wait := workflow.WithActivityOptions(ctx, waitOpts)
	var ready NodeReady
	if err := workflow.ExecuteActivity(wait, ActivityWaitForNode, NodeClaimLaunched{NodeClaim: in.Name, Instance: inst}).Get(ctx, &ready); err != nil {
		if ended(err) {
			return deleted(ctx, in, &st, inst, "", phase)
		}
		return terminateAfterFailure(ctx, short, in, &st, phase, inst, "RegistrationTimeout",
			fmt.Sprintf("node for instance %s not Ready within registration TTL %s", inst.ID, ttl), err)
	}
	st.NodeName = ready.NodeName
	phase.Set(PhaseReady, identifying(in.Private, SANodeName.ValueSet(ready.NodeName))...)

	// Serving: the node lives until a disruption asks to end it (terminate:
	// it has been drained), or its NodeClaim or Node is deleted (deleted:
	// the whole termination runs here). Receiving deleted needs no version:
	// no history recorded before it holds that signal.
	var reason string
	var notice DeletionNotice
	gotDeleted := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalTerminate), func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &reason) })
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalDeleted), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &notice)
		gotDeleted = true
	})
	sel.Select(ctx)
	if gotDeleted {
		return deleted(ctx, in, &st, inst, ready.NodeName, phase)
	}
	phase.Set(PhaseTerminating)
	term := withTerminateOptions(ctx)
	if err := workflow.ExecuteActivity(term, ActivityTerminateInstance, TerminateRequest{
		NodeClaim: in.Name, InstanceID: inst.ID, NodeName: ready.NodeName, Reason: reason,
	}).Get(ctx, nil); err != nil {
		return st, err
	}
	phase.Set(PhaseTerminated)
	return st, nil
}

// deleted runs the termination of a deleted NodeClaim or Node (see terminateNode).
func deleted(ctx workflow.Context, in NodeClaimInput, st *NodeClaimStatus, inst Instance, nodeName string, phase *phaseTracker) (NodeClaimStatus, error) {
	res, err := terminateNode(ctx, TerminationRequest{NodeClaim: in.Name, NodeName: nodeName, InstanceID: inst.ID, Reason: "deleted", Private: in.Private}, phase)
	if res.NodeName != "" {
		st.NodeName = res.NodeName
	}
	return *st, err
}

// NodeClaimLaunched ties a NodeClaim to its instance.
type NodeClaimLaunched struct {
	NodeClaim string   `json:"nodeClaim"`
	Instance  Instance `json:"instance"`
}

// launch tries CreateFleet per capacity type, cheapest offering first; an
// insufficient-capacity answer removes the failed offerings and tries again.
func launch(ctx, actx workflow.Context, in NodeClaimInput, st *NodeClaimStatus, event func(string, string, string)) (Instance, error) {
	attempts := in.LaunchAttempts
	if attempts <= 0 {
		attempts = 5
	}
	remaining := append([]saga.Offering(nil), in.Offerings...)
	var lastErr error
	for try := 0; try < attempts && len(remaining) > 0; try++ {
		st.LaunchTries++
		ct := remaining[0].CapacityType
		req := LaunchRequest{NodeClaim: in.Name, NodePool: in.NodePool, CapacityType: ct, Offerings: withCapacityType(remaining, ct), Pods: in.Pods}
		var inst Instance
		err := workflow.ExecuteActivity(actx, ActivityLaunchInstance, req).Get(ctx, &inst)
		if err == nil {
			return inst, nil
		}
		lastErr = err
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != ErrInsufficientCapacity {
			return Instance{}, err
		}
		var failed []saga.Offering
		if app.HasDetails() {
			_ = app.Details(&failed)
		}
		if len(failed) == 0 {
			failed = req.Offerings
		}
		remaining = without(remaining, failed)
		event(EventWarning, "InsufficientCapacity", fmt.Sprintf("%d offering(s) had no capacity (%s); %d left to try", len(failed), describe(failed), len(remaining)))
	}
	if lastErr == nil {
		lastErr = errors.New("no offerings to launch")
	}
	return Instance{}, fmt.Errorf("every offering tried failed: %w", lastErr)
}

// terminateAfterFailure is the compensation after an instance exists;
// reason names the failure on the NodeClaim's Warning Event.
func terminateAfterFailure(ctx, actx workflow.Context, in NodeClaimInput, st *NodeClaimStatus, phase *phaseTracker, inst Instance, reason, msg string, cause error) (NodeClaimStatus, error) {
	st.Failure = msg
	phase.Set(PhaseTerminating)
	nodeEvents(ctx, actx, EventRequest{NodeClaim: in.Name})(EventWarning, reason, msg+"; terminating "+inst.ID)
	term := withTerminateOptions(ctx)
	if err := workflow.ExecuteActivity(term, ActivityTerminateInstance, TerminateRequest{NodeClaim: in.Name, InstanceID: inst.ID, Reason: msg}).Get(ctx, nil); err != nil {
		return *st, err
	}
	phase.Set(PhaseFailed)
	return *st, temporal.NewNonRetryableApplicationError(msg, ErrNodeClaimFailed, cause)
}

func withCapacityType(offs []saga.Offering, ct string) []saga.Offering {
	var out []saga.Offering
	for _, o := range offs {
		if o.CapacityType == ct {
			out = append(out, o)
		}
	}
	return out
}

func without(offs, drop []saga.Offering) []saga.Offering {
	var out []saga.Offering
	for _, o := range offs {
		gone := false
		for _, d := range drop {
			if o.InstanceType == d.InstanceType && o.Zone == d.Zone && o.CapacityType == d.CapacityType {
				gone = true
				break
			}
		}
		if !gone {
			out = append(out, o)
		}
	}
	return out
}

func describe(offs []saga.Offering) string {
	s := ""
	for i, o := range offs {
		if i == 3 {
			return s + fmt.Sprintf(", +%d more", len(offs)-3)
		}
		if i > 0 {
			s += ", "
		}
		s += o.InstanceType + "/" + o.Zone + "/" + o.CapacityType
	}
	return s
}
