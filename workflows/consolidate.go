package workflows

import (
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Consolidate carries out one emptiness or consolidation decision as one
// saga, Karpenter's command: re-check every node together (budgets for all
// of them), taint them all karpenter.sh/disrupted so no pod evicted from
// one can land on another, re-check the saving against a fresh simulation,
// launch the decision's one replacement exactly as validated and wait
// until it is Ready, and only then drain every node (in parallel, each pod
// evicted once) and terminate them through their NodeClaim workflows.
// Compensation: if the saving is gone or the replacement fails, the
// replacement is terminated and every taint removed; nothing was evicted.
func Consolidate(ctx workflow.Context, in ConsolidateInput) (ConsolidateResult, error) {
	d, res := in.Decision, ConsolidateResult{}
	phase, err := trackPhase(ctx, PhaseChecking)
	if err != nil || len(d.Nodes) == 0 {
		return res, err
	}
	phase.Set(PhaseChecking, identifying(in.Private, SANodeName.ValueSet(d.Nodes[0]))...)
	short := workflow.WithActivityOptions(ctx, shortCall(ErrReplacementFailed))

	// 1. Still candidates, together?
	var set CandidateSet
	if err := workflow.ExecuteActivity(short, ActivityCheckCandidates, CandidatesRequest{
		Nodes: d.Nodes, Reason: d.Reason, Partial: d.Method == saga.MethodEmptiness,
	}).Get(ctx, &set); err != nil {
		return res, err
	}
	cands := set.OK()
	if set.Why != "" || len(cands) == 0 {
		res.Outcome, res.Why = PhaseSkipped, set.Why
		if res.Why == "" {
			res.Why = "no node may be disrupted any more"
		}
		phase.Set(PhaseSkipped)
		return res, nil
	}
	upsert(ctx, SANodePool.ValueSet(cands[0].NodePool))
	d.Nodes = nodeNames(cands)

	// 2. Taint them all before anything moves.
	if err := taintAll(ctx, short, cands, d.Reason, false); err != nil {
		logFailure(ctx, "compensation: removing the disrupted taints", taintAll(ctx, short, cands, d.Reason, true))
		return res, err
	}
	phase.Set(PhaseTainted)
	for _, c := range cands {
		nodeEvents(ctx, short, EventRequest{Node: c.NodeName})(EventNormal, "DisruptionStarted",
			fmt.Sprintf("disrupting node for reason %s (%s of %d node(s))", d.Reason, d.Method, len(cands)))
	}
	untaint := func() {
		logFailure(ctx, "compensation: removing the disrupted taints", taintAll(ctx, short, cands, d.Reason, true))
	}

	// 3. The saving, re-checked just before acting.
	var v saga.Validation
	recheck := workflow.WithActivityOptions(ctx, planCall(5))
	if err := workflow.ExecuteActivity(recheck, ActivityRecheckConsolidation, d).Get(ctx, &v); err != nil || !v.Valid {
		untaint()
		res.Outcome, res.Why = PhaseSkipped, "aborted before acting: "+v.Why
		if err != nil {
			res.Why = "aborted before acting: " + err.Error()
		}
		phase.Set(PhaseSkipped)
		return res, nil
	}

	// 4. The one replacement, Ready before the first eviction.
	if d.Replacement != nil {
		phase.Set(PhaseReplacing)
		name, err := launchReplacement(ctx, short, d, in.Private)
		res.Replacement = name
		if err != nil {
			untaint()
			phase.Set(PhaseFailed)
			res.Outcome, res.Why = PhaseFailed, "replacement failed: "+err.Error()
			for _, c := range cands {
				nodeEvents(ctx, short, EventRequest{Node: c.NodeName})(EventWarning, "DisruptionFailed", "replacement failed, node kept: "+err.Error())
			}
			return res, temporal.NewNonRetryableApplicationError(res.Why, ErrReplacementFailed, err)
		}
	}

	// 5. Drain every node, then terminate them.
	phase.Set(PhaseDraining)
	if err := drainAll(ctx, short, cands, &res); err != nil {
		return res, err
	}
	phase.Set(PhaseTerminating)
	if err := eachCandidate(ctx, cands, func(ctx workflow.Context, c Candidate) error {
		return terminateDisrupted(ctx, c, c.NodeName, "disrupted: "+d.Reason)
	}); err != nil {
		return res, err
	}
	phase.Set(PhaseDone)
	res.Outcome, res.Nodes = PhaseDone, d.Nodes
	return res, nil
}

// launchReplacement creates the decision's replacement NodeClaim as
// planned, starts its lifecycle and waits until its Node is Ready;
// compensation (on failure): the replacement is told to terminate.
func launchReplacement(ctx, short workflow.Context, d saga.DisruptionDecision, private bool) (string, error) {
	var nc NodeClaimInput
	if err := workflow.ExecuteActivity(short, ActivityCreateReplacement, ReplacementRequest{
		Replacement: *d.Replacement, For: d.Nodes, Private: private,
	}).Get(ctx, &nc); err != nil {
		return "", err
	}
	names, children, err := startReplacements(ctx, []NodeClaimInput{nc}, private)
	if err == nil {
		err = waitReady(ctx, names)
	}
	if err != nil {
		abandon(ctx, children, fmt.Sprintf("replacement for %d node(s) abandoned", len(d.Nodes)))
	}
	return nc.Name, err
}

// taintAll adds (or removes) the disrupted taint on every candidate, all at once.
func taintAll(ctx, short workflow.Context, cands []Candidate, reason string, remove bool) error {
	var fs []workflow.Future
	for _, c := range cands {
		fs = append(fs, workflow.ExecuteActivity(short, ActivityTaintDisrupted, TaintRequest{NodeName: c.NodeName, NodeClaim: c.NodeClaim, Reason: reason, Remove: remove}))
	}
	var first error
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// drainAll drains every candidate in parallel (drainNode each, with its
// own termination grace period), adding up what was evicted and deleted.
func drainAll(ctx, short workflow.Context, cands []Candidate, res *ConsolidateResult) error {
	return eachCandidate(ctx, cands, func(ctx workflow.Context, c Candidate) error {
		evicted, deleted, err := drainNode(ctx, drainRequest(ctx, c.NodeName, c, time.Time{}), nodeEvents(ctx, short, EventRequest{Node: c.NodeName}))
		res.Evicted += evicted
		res.Deleted += deleted
		return err
	})
}

// eachCandidate runs fn for every candidate in parallel (workflow
// coroutines, deterministic) and returns the first error.
func eachCandidate(ctx workflow.Context, cands []Candidate, fn func(workflow.Context, Candidate) error) error {
	wg := workflow.NewWaitGroup(ctx)
	errs := make([]error, len(cands))
	for i, c := range cands {
		wg.Add(1)
		workflow.Go(ctx, func(gctx workflow.Context) {
			defer wg.Done()
			errs[i] = fn(gctx, c)
		})
	}
	wg.Wait(ctx)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func nodeNames(cands []Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.NodeName
	}
	return out
}
