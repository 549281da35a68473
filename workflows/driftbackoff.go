package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Drift back-off per NodePool: a pool whose drift replacement failed (the
// DrainAndReplace failed, e.g. no capacity for the replacement, or ended
// Failed) waits DriftBackoffInitial before its next drift, doubling with
// each failure in a row up to DriftBackoffMax; a drift that succeeds
// clears it. The other pools' drift goes on meanwhile: the decision skips
// only the backed-off pools' nodes (disruption.Pass.DriftNotBefore). The
// state lives in the Consolidation workflow (ConsolidationState.DriftBackoff,
// carried across continue-as-new), so it survives worker restarts and is
// the same whichever replica runs the workflow. It changes no command of
// the workflow, only the decision activity's input and the carried state,
// so histories recorded before replay unchanged (no GetVersion needed;
// TestReplayRecordedHistories replays a drift history of the code before).
const (
	DriftBackoffInitial = time.Minute
	DriftBackoffMax     = 30 * time.Minute
)

// DriftBackoff is one NodePool's drift back-off.
type DriftBackoff struct {
	// Failures in a row of the pool's drift replacements.
	Failures int `json:"failures"`
	// NotBefore: the pool's next drift waits until then.
	NotBefore time.Time `json:"notBefore"`
	Why       string    `json:"why,omitempty"` // the last failure
}

// DriftBackoffDelay is the wait after the given number of failures in a
// row: 1 min, 2, 4, 8, 16, then 30 min.
func DriftBackoffDelay(failures int) time.Duration {
	d := DriftBackoffInitial
	for i := 1; i < failures && d < DriftBackoffMax; i++ {
		d *= 2
	}
	return min(d, DriftBackoffMax)
}

// driftNotBefore is the pass's view of the back-off: the pools whose
// drift must still wait at now. A pool whose back-off ended more than
// DriftBackoffMax ago without another failure is forgotten (its next
// failure starts again at DriftBackoffInitial).
func (st *ConsolidationState) driftNotBefore(now time.Time) map[string]time.Time {
	var out map[string]time.Time
	for pool, b := range st.DriftBackoff {
		if now.Sub(b.NotBefore) > DriftBackoffMax {
			delete(st.DriftBackoff, pool)
			continue
		}
		if now.Before(b.NotBefore) {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[pool] = b.NotBefore
		}
	}
	return out
}

// noteDrift records how a drift of the pool ended at now: failed (err, or
// Outcome Failed) backs the pool off; done clears it; skipped (the node
// was no longer a candidate) changes nothing.
func (st *ConsolidationState) noteDrift(pool string, now time.Time, res DisruptResult, err error) {
	if pool == "" {
		return
	}
	why := res.Why
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &appErr):
		why = appErr.Message() // the child's own words, without the wrapping
	case err != nil:
		why = err.Error()
	case res.Outcome == PhaseDone:
		delete(st.DriftBackoff, pool)
		return
	case res.Outcome != PhaseFailed:
		return
	}
	if st.DriftBackoff == nil {
		st.DriftBackoff = map[string]DriftBackoff{}
	}
	b := st.DriftBackoff[pool]
	b.Failures++
	b.NotBefore, b.Why = now.Add(DriftBackoffDelay(b.Failures)), why
	st.DriftBackoff[pool] = b
}

// disruptDrifted carries out a drift decision (one node) with the
// DrainAndReplace child disrupt would start, started exactly as disrupt
// starts it (so a history recorded with disrupt replays here), and notes
// its outcome in the pool's back-off.
func disruptDrifted(ctx workflow.Context, st *ConsolidationState, d saga.DisruptionDecision) string {
	private := len(d.NodeRefs) == len(d.Nodes) && len(d.NodeRefs) > 0
	done, skipped, failed := 0, 0, 0
	for i, node := range d.Nodes {
		ref := node
		if private {
			ref = d.NodeRefs[i]
		}
		opts := drainChild(d.Reason, ref, append(identifying(private, SANodeName.ValueSet(node)), SAPhase.ValueSet(PhaseChecking))...)
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		cctx := workflow.WithChildOptions(ctx, opts)
		var res DisruptResult
		err := workflow.ExecuteChildWorkflow(cctx, DrainAndReplaceWorkflow,
			DisruptInput{NodeName: node, Reason: d.Reason, Replace: d.Replace, Private: private}).Get(ctx, &res)
		switch {
		case err != nil || res.Outcome == PhaseFailed:
			failed++
		case res.Outcome == PhaseSkipped:
			skipped++
		default:
			done++
		}
		st.noteDrift(d.NodePool, workflow.Now(ctx), res, err)
	}
	out := fmt.Sprintf("disrupted %d/%d (skipped %d, failed %d)", done, len(d.Nodes), skipped, failed)
	if b, ok := st.DriftBackoff[d.NodePool]; ok && failed > 0 {
		out += fmt.Sprintf("; drift of NodePool %s backed off for %s (%d failures in a row)", d.NodePool, DriftBackoffDelay(b.Failures), b.Failures)
	}
	return out
}
