package workflows

import (
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"
)

// Consolidation loop tuning.
const (
	DefaultPassInterval    = 10 * time.Second
	DefaultValidationDelay = 15 * time.Second
	// passesPerRun bounds the history of one run; then continue-as-new.
	passesPerRun = 50
	historyKept  = 10
)

// Consolidation is the singleton (id "consolidation") that decides which
// nodes to take away: each pass asks for one decision (emptiness, drift,
// multi-node, single-node consolidation), re-simulates
// consolidation decisions after ValidationDelay, and runs DrainAndReplace
// children to carry it out. pause-disruption / resume-disruption signals
// stop and restart new disruptions; the pause is workflow state, so it
// survives worker restarts and continue-as-new.
func Consolidation(ctx workflow.Context, in ConsolidationInput) error {
	if in.PassInterval <= 0 {
		in.PassInterval = DefaultPassInterval
	}
	if in.ValidationDelay <= 0 {
		in.ValidationDelay = DefaultValidationDelay
	}
	c := &consolidationRun{ctx: ctx, in: in, st: in.State, current: PhaseWaiting}
	c.phase = loopPhase(ctx, &c.current)
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (ConsolidationStatus, error) {
		return ConsolidationStatus{ConsolidationState: c.st, Phase: c.current}, nil
	}); err != nil {
		return err
	}
	c.pauseCh = workflow.GetSignalChannel(ctx, SignalPauseDisruption)
	c.resumeCh = workflow.GetSignalChannel(ctx, SignalResumeDisruption)
	c.act = workflow.WithActivityOptions(ctx, planCall(5))

	for pass := 0; pass < passesPerRun; pass++ {
		c.pass()
	}
	c.handleSignals()
	c.phase.Set(PhaseContinuing)
	return workflow.NewContinueAsNewError(ctx, ConsolidationWorkflow, ConsolidationInput{
		PassInterval: in.PassInterval, ValidationDelay: in.ValidationDelay, State: c.st,
	})
}

// consolidationRun is one run of the Consolidation loop: its state (which
// continue-as-new carries), its phase, the pause signals.
type consolidationRun struct {
	ctx               workflow.Context
	in                ConsolidationInput
	st                ConsolidationState
	current           string
	phase             *phaseTracker
	pauseCh, resumeCh workflow.ReceiveChannel
	act               workflow.Context // planCall(5) activity options
}

// handleSignals applies the pause and resume signals received so far.
func (c *consolidationRun) handleSignals() {
	for {
		var p PauseRequest
		if c.pauseCh.ReceiveAsync(&p) {
			c.st.Paused, c.st.PauseReason, c.st.PausedUntil = true, p.Reason, time.Time{}
			if p.Duration > 0 {
				c.st.PausedUntil = workflow.Now(c.ctx).Add(p.Duration)
			}
			continue
		}
		if c.resumeCh.ReceiveAsync(nil) {
			c.st.Paused, c.st.PauseReason, c.st.PausedUntil = false, "", time.Time{}
			continue
		}
		return
	}
}

// paused applies the signals, ends a pause whose time is up, and reports
// whether disruption is paused.
func (c *consolidationRun) paused() bool {
	c.handleSignals()
	if c.st.Paused && !c.st.PausedUntil.IsZero() && !workflow.Now(c.ctx).Before(c.st.PausedUntil) {
		c.st.Paused, c.st.PauseReason, c.st.PausedUntil = false, "", time.Time{}
	}
	return c.st.Paused
}

// keep adds r to the History, the last historyKept only.
func (c *consolidationRun) keep(r DecisionRecord) {
	r.At = workflow.Now(c.ctx)
	c.st.History = append(c.st.History, r)
	if len(c.st.History) > historyKept {
		c.st.History = c.st.History[len(c.st.History)-historyKept:]
	}
}

func (c *consolidationRun) record(d saga.DisruptionDecision, outcome string) {
	c.keep(DecisionRecord{Decision: d, Outcome: outcome})
}

// pass waits the pass interval, then, unless paused, asks for one
// decision, validates it (consolidation methods) and carries it out.
func (c *consolidationRun) pass() {
	ctx, st := c.ctx, &c.st
	c.phase.Set(PhaseWaiting)
	sleep(ctx, c.in.PassInterval, c.pauseCh, c.resumeCh, c.handleSignals)
	st.Passes++
	if c.paused() {
		return
	}
	c.phase.Set(PhaseDeciding)
	d, ok := c.decide()
	if !ok || len(d.Nodes) == 0 {
		return
	}
	if d.Method == saga.MethodEmptiness || d.Method == saga.MethodMultiNode || d.Method == saga.MethodSingleNode {
		c.phase.Set(PhaseValidating)
		sleep(ctx, c.in.ValidationDelay, c.pauseCh, c.resumeCh, c.handleSignals)
		var v saga.Validation
		if err := workflow.ExecuteActivity(c.act, ActivityValidateDisruption, d).Get(ctx, &v); err != nil || !v.Valid {
			why := v.Why
			if err != nil {
				why = err.Error()
			}
			c.record(d, "dropped: "+why)
			return
		}
	}
	if c.paused() {
		c.record(d, "dropped: disruption paused")
		return
	}
	c.phase.Set(PhaseDisrupting)
	if d.Method == saga.MethodDrift {
		c.record(d, disruptDrifted(ctx, st, d)) // notes the pool's back-off
		return
	}
	r := disrupt(ctx, d)
	r.Decision = d
	c.keep(r)
}

// decide asks for the pass's decision and keeps its prices and blocked
// report in the state; false when the activity failed.
func (c *consolidationRun) decide() (saga.DisruptionDecision, bool) {
	ctx, st := c.ctx, &c.st
	var d saga.DisruptionDecision
	now := workflow.Now(ctx)
	req := DisruptionPass{Now: now, DriftNotBefore: st.driftNotBefore(now)}
	if st.LastPass != nil {
		req.Reported = st.LastPass.BlockedReport.Digest()
	}
	if err := workflow.ExecuteActivity(c.act, ActivityComputeDisruption, req).Get(ctx, &d); err != nil {
		workflow.GetLogger(ctx).Warn("disruption decision failed", "error", err)
		return d, false
	}
	st.USDPerHour, st.ListUSDPerHour, st.Catalog = d.USDPerHour, d.ListUSDPerHour, d.Catalog
	d.Catalog = "" // kept once, in the status; History stays small
	switch {
	case d.Blocked != nil:
		st.LastPass = &PassReport{At: workflow.Now(ctx), Why: d.Why, Eligible: d.Eligible, BlockedReport: *d.Blocked}
		d.Blocked = nil // the report lives in LastPass; History stays small
	case d.BlockedUnchanged && st.LastPass != nil:
		st.LastPass.At, st.LastPass.Why, st.LastPass.Eligible = workflow.Now(ctx), d.Why, d.Eligible
	}
	d.BlockedUnchanged = false
	return d, true
}

// sleep waits d of workflow time while applying pause/resume signals as they come.
func sleep(ctx workflow.Context, d time.Duration, pauseCh, resumeCh workflow.ReceiveChannel, handle func()) {
	timer := workflow.NewTimer(ctx, d)
	done := false
	for !done {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(timer, func(workflow.Future) { done = true })
		sel.AddReceive(pauseCh, func(workflow.ReceiveChannel, bool) { handle() })
		sel.AddReceive(resumeCh, func(workflow.ReceiveChannel, bool) { handle() })
		sel.Select(ctx)
	}
}

// disrupt carries out a validated decision: an emptiness or consolidation
// decision as one Consolidate saga (all its nodes, at most one
// replacement); drift and expiration as one DrainAndReplace per node.
func disrupt(ctx workflow.Context, d saga.DisruptionDecision) DecisionRecord {
	if d.Method == saga.MethodEmptiness || d.Method == saga.MethodMultiNode || d.Method == saga.MethodSingleNode {
		// Before this version each node had its own DrainAndReplace, which
		// planned its replacement again.
		if workflow.GetVersion(ctx, VersionConsolidationSaga, workflow.DefaultVersion, 1) >= 1 {
			return consolidate(ctx, d)
		}
	}
	return DecisionRecord{Outcome: disruptEach(ctx, d)}
}

// consolidate runs the decision's Consolidate child (disrupt/<reason>/<first node>).
func consolidate(ctx workflow.Context, d saga.DisruptionDecision) DecisionRecord {
	private := len(d.NodeRefs) == len(d.Nodes) && len(d.NodeRefs) > 0
	ref := d.Nodes[0]
	if private {
		ref = d.NodeRefs[0]
	}
	opts := drainChild(d.Reason, ref, append(identifying(private, SANodeName.ValueSet(d.Nodes[0])), SAPhase.ValueSet(PhaseChecking))...)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	var res ConsolidateResult
	err := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), ConsolidateWorkflow, ConsolidateInput{Decision: d, Private: private}).Get(ctx, &res)
	rec := DecisionRecord{Evicted: res.Evicted}
	if res.Replacement != "" {
		rec.Replacements = []string{res.Replacement}
	}
	switch {
	case err != nil:
		rec.Outcome = "failed: " + err.Error()
	case res.Outcome == PhaseSkipped:
		rec.Outcome = "skipped: " + res.Why
	default:
		rec.Outcome = fmt.Sprintf("disrupted %d/%d, %d pod(s) evicted", len(res.Nodes), len(d.Nodes), res.Evicted)
		if res.Replacement != "" {
			rec.Outcome += ", replaced by " + res.Replacement
		}
	}
	return rec
}

// disruptEach runs one DrainAndReplace per node: in parallel for empty
// nodes (nothing to move), one after the other otherwise, so each
// replacement is planned against the cluster as the previous drain left it.
func disruptEach(ctx workflow.Context, d saga.DisruptionDecision) string {
	private := len(d.NodeRefs) == len(d.Nodes) && len(d.NodeRefs) > 0
	start := func(i int) workflow.ChildWorkflowFuture {
		node, ref := d.Nodes[i], d.Nodes[i]
		if private {
			ref = d.NodeRefs[i]
		}
		opts := drainChild(d.Reason, ref, append(identifying(private, SANodeName.ValueSet(node)), SAPhase.ValueSet(PhaseChecking))...)
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		cctx := workflow.WithChildOptions(ctx, opts)
		return workflow.ExecuteChildWorkflow(cctx, DrainAndReplaceWorkflow, DisruptInput{NodeName: node, Reason: d.Reason, Replace: d.Replace, Private: private})
	}
	done, skipped, failed := 0, 0, 0
	count := func(f workflow.ChildWorkflowFuture) {
		var res DisruptResult
		switch err := f.Get(ctx, &res); {
		case err != nil:
			failed++
		case res.Outcome == PhaseSkipped:
			skipped++
		default:
			done++
		}
	}
	if d.Method == saga.MethodEmptiness {
		var fs []workflow.ChildWorkflowFuture
		for i := range d.Nodes {
			fs = append(fs, start(i))
		}
		for _, f := range fs {
			count(f)
		}
	} else {
		for i := range d.Nodes {
			count(start(i))
		}
	}
	return fmt.Sprintf("disrupted %d/%d (skipped %d, failed %d)", done, len(d.Nodes), skipped, failed)
}
