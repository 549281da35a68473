package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeConsolidation scripts the decision activities.
type fakeConsolidation struct {
	decide   func(i int, now time.Time) saga.DisruptionDecision
	valid    saga.Validation
	decided  []time.Time
	reported []string // DisruptionPass.Reported per pass
	drained  []DisruptInput
	sagas    []ConsolidateInput
	validate int
}

func (f *fakeConsolidation) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(_ context.Context, p DisruptionPass) (saga.DisruptionDecision, error) {
		f.decided = append(f.decided, p.Now)
		f.reported = append(f.reported, p.Reported)
		return f.decide(len(f.decided)-1, p.Now), nil
	}, activity.RegisterOptions{Name: ActivityComputeDisruption})
	env.RegisterActivityWithOptions(func(context.Context, saga.DisruptionDecision) (saga.Validation, error) {
		f.validate++
		return f.valid, nil
	}, activity.RegisterOptions{Name: ActivityValidateDisruption})
	env.RegisterWorkflowWithOptions(Consolidation, workflow.RegisterOptions{Name: ConsolidationWorkflow})
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	env.RegisterWorkflowWithOptions(Consolidate, workflow.RegisterOptions{Name: ConsolidateWorkflow})
	env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in DisruptInput) (DisruptResult, error) {
		f.drained = append(f.drained, in)
		return DisruptResult{Outcome: PhaseDone}, nil
	})
	env.OnWorkflow(ConsolidateWorkflow, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in ConsolidateInput) (ConsolidateResult, error) {
		f.sagas = append(f.sagas, in)
		res := ConsolidateResult{Outcome: PhaseDone, Nodes: in.Decision.Nodes, Evicted: 3 * len(in.Decision.Nodes)}
		if in.Decision.Replacement != nil {
			res.Replacement = "general-purpose-r2d2x"
		}
		return res, nil
	})
}

func emptyDecision(i int, _ time.Time) saga.DisruptionDecision {
	if i == 1 {
		return saga.DisruptionDecision{Method: saga.MethodEmptiness, Reason: saga.ReasonEmpty, Nodes: []string{"n1", "n2"}, USDPerHour: 1.5}
	}
	return saga.DisruptionDecision{USDPerHour: 1.5, Why: "nothing to do"}
}

// queryStatusAfter reads the workflow's status query into st once d of
// workflow time has passed; a failed query leaves st as it was, for the
// test's checks of st to catch.
func queryStatusAfter(env *testsuite.TestWorkflowEnvironment, d time.Duration, st *ConsolidationStatus) {
	env.RegisterDelayedCallback(func() {
		if v, err := env.QueryWorkflow(QueryStatus); err == nil {
			_ = v.Get(st)
		}
	}, d)
}

func runUntilContinueAsNew(t *testing.T, env *testsuite.TestWorkflowEnvironment, in ConsolidationInput) {
	t.Helper()
	env.ExecuteWorkflow(ConsolidationWorkflow, in)
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("want continue-as-new after %d passes, got %v", passesPerRun, err)
	}
}

func TestConsolidationDisruptsAValidatedDecision(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeConsolidation{decide: emptyDecision, valid: saga.Validation{Valid: true}}
	f.register(env)
	var st ConsolidationStatus
	queryStatusAfter(env, 2*time.Minute, &st)
	runUntilContinueAsNew(t, env, ConsolidationInput{})
	if len(f.decided) != passesPerRun || f.validate != 1 {
		t.Fatalf("decided %d times, validated %d", len(f.decided), f.validate)
	}
	// One saga for the whole decision: both empty nodes, no replacement.
	if len(f.drained) != 0 || len(f.sagas) != 1 || !reflect.DeepEqual(f.sagas[0].Decision, emptyDecision(1, time.Time{})) {
		t.Fatalf("drained %+v, sagas %+v", f.drained, f.sagas)
	}
	if len(st.History) != 1 || st.History[0].Outcome != "disrupted 2/2, 6 pod(s) evicted" || st.USDPerHour != 1.5 || st.History[0].Evicted != 6 {
		t.Fatalf("status %+v", st)
	}
}

// A multi-node consolidation is one Consolidate saga that carries out
// exactly the validated decision, its replacement included; drift still
// runs one DrainAndReplace per node.
func TestConsolidationRunsOneSagaPerDecision(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	plan := &saga.Replacement{NodePool: "general-purpose", InstanceTypes: []string{"c6a.large", "m6a.large"}, Offerings: offerings()[:2],
		Requirements: []saga.Requirement{{Key: "karpenter.sh/capacity-type", Operator: "In", Values: []string{"spot"}}},
		Requests:     map[string]string{"cpu": "3"}, Pods: 3, USDPerHour: 0.04, MaxUSDPerHour: 0.05}
	multi := saga.DisruptionDecision{Method: saga.MethodMultiNode, Reason: saga.ReasonUnderused, Nodes: []string{"n1", "n2", "n3"}, Replace: true,
		Replacement: plan, SavingUSDPerHour: 0.2, USDPerHour: 1, Why: "3 of 5 candidates fit on the rest plus one c6a.large"}
	f := &fakeConsolidation{valid: saga.Validation{Valid: true}, decide: func(i int, _ time.Time) saga.DisruptionDecision {
		switch i {
		case 1:
			return multi
		case 3:
			return saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{"n4"}, Replace: true}
		}
		return saga.DisruptionDecision{}
	}}
	f.register(env)
	var st ConsolidationStatus
	queryStatusAfter(env, 3*time.Minute, &st)
	runUntilContinueAsNew(t, env, ConsolidationInput{})
	if len(f.sagas) != 1 || !reflect.DeepEqual(f.sagas[0].Decision, multi) || f.validate != 1 {
		t.Fatalf("sagas %+v (validated %d), want exactly the validated decision", f.sagas, f.validate)
	}
	if len(f.drained) != 1 || f.drained[0].NodeName != "n4" || !f.drained[0].Replace {
		t.Fatalf("drift drains %+v", f.drained)
	}
	if len(st.History) != 2 || st.History[0].Outcome != "disrupted 3/3, 9 pod(s) evicted, replaced by general-purpose-r2d2x" ||
		!reflect.DeepEqual(st.History[0].Replacements, []string{"general-purpose-r2d2x"}) {
		t.Fatalf("history %+v", st.History)
	}
}

// Field case 1: a decision that no longer holds after the validation delay
// (e.g. the empty node gained a do-not-disrupt pod) is dropped: no drain.
func TestConsolidationDropsADecisionThatNoLongerHolds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeConsolidation{decide: emptyDecision, valid: saga.Validation{Why: "node n1 is no longer a candidate (do-not-disrupt, PDB, nomination or gone)"}}
	f.register(env)
	var st ConsolidationStatus
	queryStatusAfter(env, 2*time.Minute, &st)
	runUntilContinueAsNew(t, env, ConsolidationInput{})
	if len(f.drained) != 0 {
		t.Fatalf("drained %+v, want nothing", f.drained)
	}
	if len(st.History) != 1 || st.History[0].Outcome != "dropped: "+f.valid.Why {
		t.Fatalf("history %+v", st.History)
	}
}

func TestConsolidationPauseStopsDecisionsUntilItExpires(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeConsolidation{decide: func(int, time.Time) saga.DisruptionDecision { return saga.DisruptionDecision{} }, valid: saga.Validation{Valid: true}}
	f.register(env)
	var start time.Time
	var during ConsolidationStatus
	env.RegisterDelayedCallback(func() {
		start = env.Now()
		env.SignalWorkflow(SignalPauseDisruption, PauseRequest{Duration: 3 * time.Minute, Reason: "game day"})
	}, time.Second)
	queryStatusAfter(env, 2*time.Minute, &during)
	runUntilContinueAsNew(t, env, ConsolidationInput{})
	if !during.Paused || during.PauseReason != "game day" {
		t.Fatalf("status during pause %+v", during.ConsolidationState)
	}
	for _, at := range f.decided {
		if at.After(start) && at.Before(start.Add(3*time.Minute)) {
			t.Fatalf("decided at %s while paused (pause %s + 3m)", at, start)
		}
	}
	if len(f.decided) < passesPerRun-20 {
		t.Fatalf("only %d decisions: the pause did not expire", len(f.decided))
	}
}

func TestConsolidationPauseSurvivesContinueAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeConsolidation{decide: func(int, time.Time) saga.DisruptionDecision { return saga.DisruptionDecision{} }}
	f.register(env)
	runUntilContinueAsNew(t, env, ConsolidationInput{State: ConsolidationState{Paused: true, PauseReason: "freeze"}})
	if len(f.decided) != 0 {
		t.Fatalf("decided %d times while paused from the carried state", len(f.decided))
	}
}

// The status query lists the last pass's blocked nodes (LastPass), and the
// continue-as-new input carries them; History keeps decisions without the
// report. A state written before LastPass existed still decodes.
func TestConsolidationStatusListsTheLastPassBlockedNodes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	report := func(i int) *saga.BlockedReport {
		return &saga.BlockedReport{Total: 2, ByReason: map[string]int{"pdb": 1, "budget": 1 + i%2},
			Nodes: []saga.BlockedNode{{Node: "n3", NodeClaim: "general-3", NodePool: "general", Reasons: []saga.BlockReason{
				{Reason: "pdb", Event: "DisruptionBlocked", Message: "PDB default/web prevents pod evictions (pod default/web-1)"}}}}}
	}
	f := &fakeConsolidation{valid: saga.Validation{Valid: true}, decide: func(i int, _ time.Time) saga.DisruptionDecision {
		d := saga.DisruptionDecision{USDPerHour: 1, Why: "nothing to do among 3 candidates", Eligible: 3, Blocked: report(i)}
		if i == 1 {
			d.Method, d.Reason, d.Nodes, d.Why = saga.MethodEmptiness, saga.ReasonEmpty, []string{"n1"}, "1 node(s) empty"
		}
		return d
	}}
	f.register(env)
	var st ConsolidationStatus
	queryStatusAfter(env, 2*time.Minute, &st)
	env.ExecuteWorkflow(ConsolidationWorkflow, ConsolidationInput{})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
	lp := st.LastPass
	if lp == nil || lp.Why != "nothing to do among 3 candidates" || lp.Eligible != 3 || lp.Total != 2 || len(lp.Nodes) != 1 ||
		lp.Nodes[0].Reasons[0].Message != "PDB default/web prevents pod evictions (pod default/web-1)" || lp.At.IsZero() {
		t.Fatalf("last pass %+v", lp)
	}
	if len(st.History) != 1 || st.History[0].Decision.Blocked != nil {
		t.Fatalf("history %+v", st.History)
	}
	var next ConsolidationInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	// The last pass (i = passesPerRun-1, odd) counted 2 budget-blocked nodes.
	if next.State.LastPass == nil || next.State.LastPass.ByReason["budget"] != 2 || next.State.Passes != passesPerRun {
		t.Fatalf("carried state %+v", next.State.LastPass)
	}
	var old ConsolidationInput
	if err := json.Unmarshal([]byte(`{"state":{"paused":true,"pauseReason":"x","usdPerHour":2,"passes":7}}`), &old); err != nil || old.State.LastPass != nil || old.State.Passes != 7 {
		t.Fatalf("old state %+v, %v", old.State, err)
	}
}

// A pass whose report equals the one the workflow holds (the digest it
// sent) comes back without it: LastPass keeps the report and takes the
// pass's time and outcome.
func TestConsolidationKeepsAnUnchangedReport(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	rep := saga.BlockedReport{Total: 1, ByReason: map[string]int{"pdb": 1}, Nodes: []saga.BlockedNode{{Node: "n3", NodeClaim: "general-3",
		Reasons: []saga.BlockReason{{Reason: "pdb", Event: "DisruptionBlocked", Message: "PDB default/web prevents pod evictions (pod default/web-1)"}}}}}
	var f *fakeConsolidation
	f = &fakeConsolidation{decide: func(i int, _ time.Time) saga.DisruptionDecision {
		d := saga.DisruptionDecision{Why: fmt.Sprintf("pass %d", i)}
		if f.reported[i] == rep.Digest() {
			d.BlockedUnchanged = true
		} else {
			d.Blocked = &rep
		}
		return d
	}}
	f.register(env)
	var st ConsolidationStatus
	var at time.Time
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		if err == nil {
			_ = v.Get(&st)
		}
		at = env.Now()
	}, 2*time.Minute)
	env.ExecuteWorkflow(ConsolidationWorkflow, ConsolidationInput{})
	if f.reported[0] != "" {
		t.Fatalf("first pass sent digest %q", f.reported[0])
	}
	for i, r := range f.reported[1:] {
		if r != rep.Digest() {
			t.Fatalf("pass %d sent %q, want %q", i+1, r, rep.Digest())
		}
	}
	lp := st.LastPass
	if lp == nil || !reflect.DeepEqual(lp.BlockedReport, rep) || lp.Why == "pass 0" || at.Sub(lp.At) > DefaultPassInterval+time.Second {
		t.Fatalf("last pass %+v (query at %s)", lp, at)
	}
}
