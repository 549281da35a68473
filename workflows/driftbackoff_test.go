package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

func TestDriftBackoffDelayDoublesUpToThirtyMinutes(t *testing.T) {
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for i, w := range want {
		if got := DriftBackoffDelay(i + 1); got != w {
			t.Errorf("after %d failures: %s, want %s", i+1, got, w)
		}
	}
	if got := DriftBackoffDelay(1000); got != DriftBackoffMax {
		t.Errorf("after 1000 failures: %s", got)
	}
}

func TestNoteDriftBacksOffClearsAndForgets(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var st ConsolidationState
	failed := DisruptResult{Outcome: PhaseFailed, Why: "replacement failed: no capacity"}
	st.noteDrift("a", t0, failed, nil)
	st.noteDrift("a", t0.Add(time.Minute), DisruptResult{}, errors.New("child failed"))
	st.noteDrift("b", t0, failed, nil)
	st.noteDrift("", t0, failed, nil) // decisions recorded before pools were named
	if b := st.DriftBackoff["a"]; b.Failures != 2 || !b.NotBefore.Equal(t0.Add(3*time.Minute)) || b.Why != "child failed" || len(st.DriftBackoff) != 2 {
		t.Fatalf("after two failures of a, one of b: %+v", st.DriftBackoff)
	}
	st.noteDrift("a", t0.Add(2*time.Minute), DisruptResult{Outcome: PhaseSkipped}, nil)
	if st.DriftBackoff["a"].Failures != 2 {
		t.Errorf("a skipped drift changed the back-off: %+v", st.DriftBackoff["a"])
	}
	nb := st.driftNotBefore(t0.Add(2 * time.Minute))
	if len(nb) != 1 || !nb["a"].Equal(t0.Add(3*time.Minute)) {
		t.Errorf("not before at t0+2m: %v, want only a (b's minute is over)", nb)
	}
	st.noteDrift("a", t0.Add(4*time.Minute), DisruptResult{Outcome: PhaseDone}, nil)
	if _, ok := st.DriftBackoff["a"]; ok {
		t.Errorf("a done drift left a back-off: %+v", st.DriftBackoff)
	}
	// b's back-off ended at t0+1m; 30 minutes later it is forgotten.
	if nb := st.driftNotBefore(t0.Add(31 * time.Minute)); len(nb) != 0 || len(st.DriftBackoff) != 1 {
		t.Errorf("at t0+31m: %v, state %v", nb, st.DriftBackoff)
	}
	if st.driftNotBefore(t0.Add(31*time.Minute + time.Second)); len(st.DriftBackoff) != 0 {
		t.Errorf("b not forgotten: %v", st.DriftBackoff)
	}
}

// The Consolidation workflow feeds the back-off: pool a's drift
// replacement keeps failing, so a waits 1, 2, 4, then 8 minutes while
// pool b's drift goes on in between; the state is carried to the next run.
func TestConsolidationBacksOffAFailingPoolsDrift(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var start time.Time
	var aAt []time.Duration // when pool a's drift was decided, from the start
	var bDrifts int
	env.RegisterActivityWithOptions(func(_ context.Context, p DisruptionPass) (saga.DisruptionDecision, error) {
		if nb, ok := p.DriftNotBefore["a"]; ok && p.Now.Before(nb) {
			bDrifts++
			return saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{"b1"}, NodePool: "b", Replace: true}, nil
		}
		aAt = append(aAt, p.Now.Sub(start))
		return saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{"a1"}, NodePool: "a", Replace: true}, nil
	}, activity.RegisterOptions{Name: ActivityComputeDisruption})
	env.RegisterActivityWithOptions(func(context.Context, saga.DisruptionDecision) (saga.Validation, error) {
		return saga.Validation{Valid: true}, nil
	}, activity.RegisterOptions{Name: ActivityValidateDisruption})
	env.RegisterWorkflowWithOptions(Consolidation, workflow.RegisterOptions{Name: ConsolidationWorkflow})
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in DisruptInput) (DisruptResult, error) {
		if in.NodeName == "a1" {
			res := DisruptResult{Outcome: PhaseFailed, Why: "replacement failed: InsufficientInstanceCapacity"}
			return res, temporal.NewNonRetryableApplicationError(res.Why, ErrReplacementFailed, nil)
		}
		return DisruptResult{Outcome: PhaseDone}, nil
	})
	var mid ConsolidationStatus
	queryStatusAfter(env, 100*time.Second, &mid)
	start = env.Now()
	env.ExecuteWorkflow(ConsolidationWorkflow, ConsolidationInput{})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
	want := []time.Duration{10 * time.Second, 70 * time.Second, 190 * time.Second, 430 * time.Second}
	if len(aAt) != len(want) {
		t.Fatalf("pool a's drift decided at %v, want %v", aAt, want)
	}
	for i := range want {
		if aAt[i] != want[i] {
			t.Fatalf("pool a's drift decided at %v, want %v", aAt, want)
		}
	}
	if bDrifts != passesPerRun-len(want) {
		t.Errorf("pool b drifted %d times, want every other pass (%d)", bDrifts, passesPerRun-len(want))
	}
	if b := mid.DriftBackoff["a"]; b.Failures != 2 || !b.NotBefore.Equal(start.Add(190*time.Second)) || b.Why != "replacement failed: InsufficientInstanceCapacity" {
		t.Errorf("status at 100 s: %+v", mid.DriftBackoff)
	}
	var last DecisionRecord
	for _, r := range mid.History {
		if r.Decision.NodePool == "a" {
			last = r
		}
	}
	if last.Outcome != "disrupted 0/1 (skipped 0, failed 1); drift of NodePool a backed off for 2m0s (2 failures in a row)" {
		t.Errorf("pool a's last outcome at 100 s: %q", last.Outcome)
	}
	var next ConsolidationInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if b := next.State.DriftBackoff["a"]; b.Failures != 4 || !b.NotBefore.Equal(start.Add(430*time.Second+8*time.Minute)) || len(next.State.DriftBackoff) != 1 {
		t.Errorf("carried to the next run: %+v", next.State.DriftBackoff)
	}
}
