package workflows

import (
	"fmt"
	"time"

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
	st := in.State
	current := PhaseWaiting
	phase := loopPhase(ctx, &current)
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (ConsolidationStatus, error) {
		return ConsolidationStatus{ConsolidationState: st, Phase: current}, nil
	}); err != nil {
		return err
	}
	pauseCh := workflow.GetSignalChannel(ctx, SignalPauseDisruption)
	resumeCh := workflow.GetSignalChannel(ctx, SignalResumeDisruption)
	handleSignals := func() {
		for {
			var p PauseRequest
			if pauseCh.ReceiveAsync(&p) {
				st.Paused, st.PauseReason, st.PausedUntil = true, p.Reason, time.Time{}
				if p.Duration > 0 {
					st.PausedUntil = workflow.Now(ctx).Add(p.Duration)
				}
				continue
			}
			if resumeCh.ReceiveAsync(nil) {
				st.Paused, st.PauseReason, st.PausedUntil = false, "", time.Time{}
				continue
			}
			return
		}
	}
	paused := func() bool {
		handleSignals()
		if st.Paused && !st.PausedUntil.IsZero() && !workflow.Now(ctx).Before(st.PausedUntil) {
			st.Paused, st.PauseReason, st.PausedUntil = false, "", time.Time{}
		}
		return st.Paused
	}
	act := workflow.WithActivityOptions(ctx, planCall(5))
	keep := func(r DecisionRecord) {
		r.At = workflow.Now(ctx)
		st.History = append(st.History, r)
		if len(st.History) > historyKept {
			st.History = st.History[len(st.History)-historyKept:]
		}
	}
	record := func(d DisruptionDecision, outcome string) { keep(DecisionRecord{Decision: d, Outcome: outcome}) }

	for pass := 0; pass < passesPerRun; pass++ {
		phase.Set(PhaseWaiting)
		sleep(ctx, in.PassInterval, pauseCh, resumeCh, handleSignals)
		st.Passes++
		if paused() {
			continue
		}
		phase.Set(PhaseDeciding)
		var d DisruptionDecision
		now := workflow.Now(ctx)
		req := DisruptionPass{Now: now, DriftNotBefore: st.driftNotBefore(now)}
		if st.LastPass != nil {
			req.Reported = st.LastPass.BlockedReport.Digest()
		}
		if err := workflow.ExecuteActivity(act, ActivityComputeDisruption, req).Get(ctx, &d); err != nil {
			workflow.GetLogger(ctx).Warn("disruption decision failed", "error", err)
			continue
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
		if len(d.Nodes) == 0 {
			continue
		}
		if d.Method == MethodEmptiness || d.Method == MethodMultiNode || d.Method == MethodSingleNode {
			phase.Set(PhaseValidating)
			sleep(ctx, in.ValidationDelay, pauseCh, resumeCh, handleSignals)
			var v Validation
			if err := workflow.ExecuteActivity(act, ActivityValidateDisruption, d).Get(ctx, &v); err != nil || !v.Valid {
				why := v.Why
				if err != nil {
					why = err.Error()
				}
				record(d, "dropped: "+why)
				continue
			}
		}
		if paused() {
			record(d, "dropped: disruption paused")
			continue
		}
		phase.Set(PhaseDisrupting)
		if d.Method == MethodDrift {
			record(d, disruptDrifted(ctx, &st, d)) // notes the pool's back-off
			continue
		}
		r := disrupt(ctx, d)
		r.Decision = d
		keep(r)
	}
	handleSignals()
	phase.Set(PhaseContinuing)
	return workflow.NewContinueAsNewError(ctx, ConsolidationWorkflow, ConsolidationInput{
		PassInterval: in.PassInterval, ValidationDelay: in.ValidationDelay, State: st,
	})
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
func disrupt(ctx workflow.Context, d DisruptionDecision) DecisionRecord {
	if d.Method == MethodEmptiness || d.Method == MethodMultiNode || d.Method == MethodSingleNode {
		// Before this version each node had its own DrainAndReplace, which
		// planned its replacement again.
		if workflow.GetVersion(ctx, VersionConsolidationSaga, workflow.DefaultVersion, 1) >= 1 {
			return consolidate(ctx, d)
		}
	}
	return DecisionRecord{Outcome: disruptEach(ctx, d)}
}

// consolidate runs the decision's Consolidate child (disrupt/<reason>/<first node>).
func consolidate(ctx workflow.Context, d DisruptionDecision) DecisionRecord {
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
func disruptEach(ctx workflow.Context, d DisruptionDecision) string {
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
	if d.Method == MethodEmptiness {
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
