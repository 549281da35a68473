package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Drain pacing: passes start 1 s apart and back off to 30 s while pods remain.
const (
	drainFirstBackoff = time.Second
	drainMaxBackoff   = 30 * time.Second
)

// DrainAndReplace removes one node without breaking its workloads:
// re-check the candidate, taint it karpenter.sh/disrupted, launch
// replacements and wait until they are Ready, evict its pods in tiers
// (PodDisruptionBudgets respected until the termination grace period
// runs out), then terminate the instance and delete the Node and
// NodeClaim. Compensation: if a replacement fails, the replacements are
// terminated and the taint removed; the old node keeps serving.
func DrainAndReplace(ctx workflow.Context, in DisruptInput) (DisruptResult, error) {
	res := DisruptResult{}
	phase, short, event, err := startDisruption(ctx, in.NodeName, in.Private)
	if err != nil {
		return res, err
	}
	cand, taint, err := checkAndTaint(ctx, short, phase, in, in.Reason)
	if err != nil || !cand.OK {
		res.Outcome, res.Why = skipped(cand, err)
		return res, err
	}
	event(EventNormal, "DisruptionStarted", fmt.Sprintf("disrupting node for reason %s", in.Reason))

	// 3. Replacements first; the old node keeps serving meanwhile.
	if in.Replace {
		phase.Set(PhaseReplacing)
		names, children, err := replace(ctx, short, in)
		res.Replacements = names
		if err != nil {
			compensateReplacement(ctx, short, children, taint)
			phase.Set(PhaseFailed)
			event(EventWarning, "DisruptionFailed", "replacement failed, node kept: "+err.Error())
			res.Outcome, res.Why = PhaseFailed, "replacement failed: "+err.Error()
			return res, temporal.NewNonRetryableApplicationError(res.Why, ErrReplacementFailed, err)
		}
	}

	// 4. Drain.
	phase.Set(PhaseDraining)
	if err := drain(ctx, in, cand, &res, event); err != nil {
		return res, err
	}

	// 5. Terminate through the node's own lifecycle workflow, so its history
	// ends with the termination.
	phase.Set(PhaseTerminating)
	if err := terminateDisrupted(ctx, cand, in.NodeName, "disrupted: "+in.Reason); err != nil {
		return res, err
	}
	phase.Set(PhaseDone)
	res.Outcome = PhaseDone
	return res, nil
}

// startDisruption opens a saga on one node: its phase (checking) and
// identity as search attributes, the short activity options and the
// node's Event recorder.
func startDisruption(ctx workflow.Context, node string, private bool) (*phaseTracker, workflow.Context, func(string, string, string), error) {
	phase, err := trackPhase(ctx, PhaseChecking)
	if err != nil {
		return nil, nil, nil, err
	}
	phase.Set(PhaseChecking, identifying(private, SANodeName.ValueSet(node))...)
	short := workflow.WithActivityOptions(ctx, shortCall(ErrReplacementFailed))
	return phase, short, nodeEvents(ctx, short, EventRequest{Node: node}), nil
}

// checkAndTaint re-checks that check's node is still a candidate; if so it
// records the NodeClaim's identity and taints the node
// karpenter.sh/disrupted for reason, otherwise the phase ends skipped
// (cand.OK false).
func checkAndTaint(ctx, short workflow.Context, phase *phaseTracker, check DisruptInput, reason string) (Candidate, TaintRequest, error) {
	var cand Candidate
	if err := workflow.ExecuteActivity(short, ActivityCheckCandidate, check).Get(ctx, &cand); err != nil {
		return cand, TaintRequest{}, err
	}
	if !cand.OK {
		phase.Set(PhaseSkipped)
		return cand, TaintRequest{}, nil
	}
	upsert(ctx, append([]temporal.SearchAttributeUpdate{SANodeClaim.ValueSet(cand.NodeClaim), SANodePool.ValueSet(cand.NodePool)},
		identifying(check.Private, SAInstanceID.ValueSet(cand.InstanceID))...)...)
	taint := TaintRequest{NodeName: check.NodeName, NodeClaim: cand.NodeClaim, Reason: reason}
	if err := workflow.ExecuteActivity(short, ActivityTaintDisrupted, taint).Get(ctx, nil); err != nil {
		return cand, taint, err
	}
	phase.Set(PhaseTainted)
	return cand, taint, nil
}

// skipped is a saga's outcome when checkAndTaint did not go through.
func skipped(cand Candidate, err error) (string, string) {
	if err != nil {
		return "", ""
	}
	return PhaseSkipped, cand.Why
}

// terminateDisrupted ends a drained node: its NodeClaim workflow is told to
// terminate (its history then ends with the termination), or, if it is not
// running, the instance is terminated directly; then it waits until the
// NodeClaim and the instance are gone.
func terminateDisrupted(ctx workflow.Context, cand Candidate, nodeName, reason string) error {
	sig := workflow.SignalExternalWorkflow(ctx, NodeClaimWorkflowID(cand.NodeClaim), "", SignalTerminate, reason)
	if err := sig.Get(ctx, nil); err != nil {
		term := withTerminateOptions(ctx)
		if err := workflow.ExecuteActivity(term, ActivityTerminateInstance, TerminateRequest{
			NodeClaim: cand.NodeClaim, InstanceID: cand.InstanceID, NodeName: nodeName, Reason: reason,
		}).Get(ctx, nil); err != nil {
			return err
		}
	}
	gone := workflow.WithActivityOptions(ctx, untilGone(10*time.Minute))
	return workflow.ExecuteActivity(gone, ActivityWaitNodeClaimGone, TerminateRequest{NodeClaim: cand.NodeClaim, InstanceID: cand.InstanceID, NodeName: nodeName}).Get(ctx, nil)
}

// replace plans replacement NodeClaims, starts their lifecycles and, unless
// this is an interruption, waits until each Node is Ready.
func replace(ctx, short workflow.Context, in DisruptInput) ([]string, []workflow.ChildWorkflowFuture, error) {
	var claims []NodeClaimInput
	if err := workflow.ExecuteActivity(short, ActivityPlanReplacement, in).Get(ctx, &claims); err != nil {
		return nil, nil, err
	}
	names, children, err := startReplacements(ctx, claims, in.Private)
	if err != nil || in.Interruption {
		return names, children, err
	}
	return names, children, waitReady(ctx, names)
}

// startReplacements starts the lifecycles (nodeclaim/<name>) of
// replacement NodeClaims whose objects exist.
func startReplacements(ctx workflow.Context, claims []NodeClaimInput, private bool) ([]string, []workflow.ChildWorkflowFuture, error) {
	var names []string
	var children []workflow.ChildWorkflowFuture
	for _, nc := range claims {
		// A replacement of a private drain is private (PlanReplacement sets
		// it too; older histories have neither).
		nc.Private = nc.Private || private
		f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, nodeClaimChild(nc)), NodeClaimWorkflow, nc)
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			return names, children, fmt.Errorf("start replacement %s: %w", nc.Name, err)
		}
		names = append(names, nc.Name)
		children = append(children, f)
	}
	return names, children, nil
}

// waitReady waits until each replacement's Node is Ready and initialized
// (ErrReplacementFailed if its NodeClaim goes first).
func waitReady(ctx workflow.Context, names []string) error {
	wait := workflow.WithActivityOptions(ctx, untilReady(DefaultRegistrationTTL+5*time.Minute, ErrReplacementFailed))
	for _, n := range names {
		if err := workflow.ExecuteActivity(wait, ActivityWaitNodeClaimReady, n).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// compensateReplacement ends the replacements' lifecycles and removes the taint.
func compensateReplacement(ctx, short workflow.Context, children []workflow.ChildWorkflowFuture, taint TaintRequest) {
	abandon(ctx, children, "replacement for "+taint.NodeName+" abandoned")
	taint.Remove = true
	logFailure(ctx, "compensation: removing the disrupted taint", workflow.ExecuteActivity(short, ActivityTaintDisrupted, taint).Get(ctx, nil), "node", taint.NodeName)
}

// abandon tells replacements to terminate. A replacement whose launch
// failed has already ended: its signal fails, and that is fine.
func abandon(ctx workflow.Context, children []workflow.ChildWorkflowFuture, why string) {
	for _, c := range children {
		if err := c.SignalChildWorkflow(ctx, SignalTerminate, why).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Info("abandoned replacement not signalled (it may have ended)", "why", why, "error", err)
		}
	}
}

// drain is DrainAndReplace's drain: the deadline is the earlier of the
// termination grace period from now and the input's (an interruption's).
func drain(ctx workflow.Context, in DisruptInput, cand Candidate, res *DisruptResult, event func(string, string, string)) error {
	req := drainRequest(ctx, in.NodeName, cand, in.Deadline)
	req.EvictDoNotDisrupt = in.Interruption
	evicted, deleted, err := drainNode(ctx, req, event)
	res.Evicted += evicted
	res.Deleted += deleted
	return err
}

// drainRequest is the drain of a candidate: its deadline is the earlier of
// the termination grace period from now and deadline (zero: none).
func drainRequest(ctx workflow.Context, node string, cand Candidate, deadline time.Time) DrainRequest {
	req := DrainRequest{NodeName: node}
	if cand.TerminationGracePeriod > 0 {
		req.Deadline = workflow.Now(ctx).Add(cand.TerminationGracePeriod)
	}
	if !deadline.IsZero() && (req.Deadline.IsZero() || deadline.Before(req.Deadline)) {
		req.Deadline = deadline
	}
	return req
}

// drainNode runs drain passes (DrainStep) until the node holds no pod it
// must wait for, and returns how many pods it evicted and deleted. It is
// the one drain of Joinery: DrainAndReplace and a deleted node's
// termination both run it. Deadlines use workflow time, so a 4 h
// termination grace period is a durable timer, not a wall-clock
// comparison in an activity. event records a FailedDraining Event once
// per blocked pod.
func drainNode(ctx workflow.Context, req DrainRequest, event func(string, string, string)) (evicted, deleted int, err error) {
	// A pass is short: a worker that dies mid-pass is noticed within 30 s.
	step := workflow.WithActivityOptions(ctx, drainPass())
	backoff := drainFirstBackoff
	reported := map[string]bool{}
	notices := workflow.GetSignalChannel(ctx, SignalNoticeEnd)
	for {
		var n NoticeEnd
		for notices.ReceiveAsync(&n) {
			req = withNotice(ctx, req, n)
		}
		req.Now = workflow.Now(ctx)
		var st DrainStatus
		if err := workflow.ExecuteActivity(step, ActivityDrainStep, req).Get(ctx, &st); err != nil {
			return evicted, deleted, err
		}
		evicted += len(st.Evicted)
		deleted += len(st.Deleted)
		if st.Remaining == 0 {
			return evicted, deleted, nil
		}
		if len(st.Evicted) > 0 || len(st.Deleted) > 0 {
			backoff = drainFirstBackoff
		}
		for _, p := range st.Blocked {
			if !reported[p] {
				reported[p] = true
				event(EventWarning, "FailedDraining", "eviction of "+p+" blocked by a PodDisruptionBudget; retrying")
			}
		}
		sleep := backoff
		if !st.NextForceDelete.IsZero() {
			// Wake up when the next pod is due, so PDB-blocked pods are deleted on time.
			if until := st.NextForceDelete.Sub(req.Now); until > 0 && until < sleep {
				sleep = until
			}
		}
		if err := sleepOrNotice(ctx, sleep, notices); err != nil {
			return evicted, deleted, err
		}
		backoff = min(2*backoff, drainMaxBackoff)
	}
}

// sleepOrNotice sleeps d, or less if a NoticeEnd arrives (left in the
// channel for the next pass). The timer is the same command workflow.Sleep
// makes, so histories recorded before notices replay unchanged.
func sleepOrNotice(ctx workflow.Context, d time.Duration, notices workflow.ReceiveChannel) error {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, d)
	noticed := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddReceive(notices, func(workflow.ReceiveChannel, bool) { noticed = true })
	sel.Select(ctx)
	if noticed {
		return ctx.Err()
	}
	return timer.Get(ctx, nil)
}

// withNotice is the drain once its node is known to go away at n.Deadline:
// the earlier deadline, and do-not-disrupt pods evicted too (they go with
// the instance anyway).
func withNotice(ctx workflow.Context, req DrainRequest, n NoticeEnd) DrainRequest {
	if n.Deadline.IsZero() {
		return req
	}
	if req.Deadline.IsZero() || n.Deadline.Before(req.Deadline) {
		req.Deadline = n.Deadline
	}
	req.EvictDoNotDisrupt = true
	workflow.GetLogger(ctx).Info("drain told its node goes away", "node", req.NodeName, "kind", n.Kind, "deadline", req.Deadline)
	return req
}

// IsReplacementFailed reports whether err is a failed replacement.
func IsReplacementFailed(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == ErrReplacementFailed
}
