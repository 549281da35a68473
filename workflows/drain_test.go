package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeDrain scripts the drain saga's activities and records the calls.
type fakeDrain struct {
	cand          Candidate
	replacements  []NodeClaimInput
	replacementOK bool
	// drain answers one DrainStep (by call index).
	drain     func(i int, r DrainRequest) DrainStatus
	drains    []DrainRequest
	taints    []TaintRequest
	signals   []string // workflow ids signalled terminate
	terminate []TerminateRequest
	gone      int
}

func (f *fakeDrain) register(env *testsuite.TestWorkflowEnvironment) {
	reg := func(fn interface{}, name string) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	reg(func(context.Context, DisruptInput) (Candidate, error) { return f.cand, nil }, ActivityCheckCandidate)
	reg(func(_ context.Context, r TaintRequest) error { f.taints = append(f.taints, r); return nil }, ActivityTaintDisrupted)
	reg(func(context.Context, DisruptInput) ([]NodeClaimInput, error) { return f.replacements, nil }, ActivityPlanReplacement)
	reg(func(_ context.Context, name string) (NodeReady, error) {
		if !f.replacementOK {
			return NodeReady{}, temporal.NewNonRetryableApplicationError("gone", ErrReplacementFailed, nil)
		}
		return NodeReady{NodeName: "new-" + name}, nil
	}, ActivityWaitNodeClaimReady)
	reg(func(_ context.Context, r DrainRequest) (DrainStatus, error) {
		f.drains = append(f.drains, r)
		return f.drain(len(f.drains)-1, r), nil
	}, ActivityDrainStep)
	reg(func(_ context.Context, r TerminateRequest) error { f.terminate = append(f.terminate, r); return nil }, ActivityTerminateInstance)
	reg(func(context.Context, TerminateRequest) error { f.gone++; return nil }, ActivityWaitNodeClaimGone)
	reg(func(context.Context, EventRequest) error { return nil }, ActivityRecordEvent)
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	if f.replacementOK {
		env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
		env.OnWorkflow(NodeClaimWorkflow, mock.Anything, mock.Anything).Return(NodeClaimStatus{Phase: PhaseReady}, nil)
	} else {
		// A replacement that will fail runs until told to terminate, as the real one does.
		env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
			var reason string
			workflow.GetSignalChannel(ctx, SignalTerminate).Receive(ctx, &reason)
			f.signals = append(f.signals, NodeClaimWorkflowID(in.Name))
			return NodeClaimStatus{Phase: PhaseTerminated}, nil
		}, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	}
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalTerminate, mock.Anything).Return(
		func(_ string, id, _ string, _ string, _ interface{}) error {
			f.signals = append(f.signals, id)
			return nil
		})
}

func candidate() Candidate {
	return Candidate{OK: true, NodeClaim: "general-purpose-abcde", NodePool: "general-purpose", InstanceID: "i-1"}
}

func TestDrainAndReplaceHappyPath(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeDrain{cand: candidate(), replacementOK: true,
		replacements: []NodeClaimInput{{Name: "general-purpose-repl1", NodePool: "general-purpose", Offerings: offerings()}},
		drain: func(i int, _ DrainRequest) DrainStatus {
			switch i {
			case 0:
				return DrainStatus{Remaining: 3, Tier: 1, Evicted: []string{"default/a"}, Blocked: []string{"default/b", "default/c"}}
			case 1:
				return DrainStatus{Remaining: 2, Tier: 1, Evicted: []string{"default/b", "default/c"}}
			}
			return DrainStatus{}
		}}
	f.register(env)
	env.ExecuteWorkflow(DrainAndReplaceWorkflow, DisruptInput{NodeName: "ip-10-0-0-4.ec2.internal", Reason: saga.ReasonManual, Replace: true})
	var res DisruptResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseDone || res.Evicted != 3 || len(res.Replacements) != 1 {
		t.Fatalf("result = %+v", res)
	}
	if len(f.taints) != 1 || f.taints[0].Remove || f.taints[0].NodeClaim != "general-purpose-abcde" {
		t.Fatalf("taints = %+v", f.taints)
	}
	// The old node is terminated through its own lifecycle workflow.
	if len(f.signals) != 1 || f.signals[0] != "nodeclaim/general-purpose-abcde" || f.gone != 1 || len(f.terminate) != 0 {
		t.Fatalf("signals=%v gone=%d terminate=%v", f.signals, f.gone, f.terminate)
	}
	if len(f.drains) != 3 {
		t.Fatalf("drain passes = %d, want 3", len(f.drains))
	}
}

func TestDrainAndReplaceCompensatesAFailedReplacement(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeDrain{cand: candidate(), replacementOK: false,
		replacements: []NodeClaimInput{{Name: "general-purpose-repl1", NodePool: "general-purpose", Offerings: offerings()}},
		drain:        func(int, DrainRequest) DrainStatus { t.Fatal("must not drain"); return DrainStatus{} }}
	f.register(env)
	env.ExecuteWorkflow(DrainAndReplaceWorkflow, DisruptInput{NodeName: "n1", Reason: saga.ReasonDrifted, Replace: true})
	err := env.GetWorkflowError()
	if err == nil || !IsReplacementFailed(err) {
		t.Fatalf("error = %v, want a replacement failure", err)
	}
	// Compensation: the replacement is told to terminate and the taint removed.
	if len(f.signals) != 1 || f.signals[0] != "nodeclaim/general-purpose-repl1" {
		t.Fatalf("signals = %v", f.signals)
	}
	if len(f.taints) != 2 || !f.taints[1].Remove {
		t.Fatalf("taints = %+v", f.taints)
	}
	if len(f.drains) != 0 || f.gone != 0 {
		t.Fatalf("old node touched: drains=%d gone=%d", len(f.drains), f.gone)
	}
}

func TestDrainAndReplaceSkipsANodeThatIsNoLongerACandidate(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeDrain{cand: Candidate{Why: "pod default/x is annotated karpenter.sh/do-not-disrupt"}}
	f.register(env)
	env.ExecuteWorkflow(DrainAndReplaceWorkflow, DisruptInput{NodeName: "n1", Reason: saga.ReasonUnderused})
	var res DisruptResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseSkipped || res.Why != f.cand.Why || len(f.taints) != 0 {
		t.Fatalf("res=%+v taints=%v", res, f.taints)
	}
}

// Field case 1: a PDB allowing zero disruptions, pod grace 30 s, NodeClaim
// terminationGracePeriod 4h: nothing is deleted before 4h-30s of workflow
// time, and the pod is deleted by 4h.
func TestDrainDeletesPDBBlockedPodsOnlyAtTheGraceDeadline(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	const tgp = 4 * time.Hour
	cand := candidate()
	cand.TerminationGracePeriod = tgp
	var start, deletedAt time.Time
	f := &fakeDrain{cand: cand, drain: func(i int, r DrainRequest) DrainStatus {
		if i == 0 {
			start = r.Now
		}
		if !deletedAt.IsZero() {
			return DrainStatus{} // the deleted pod is gone
		}
		due := r.Deadline.Add(-30 * time.Second)
		if !r.Now.Before(due) {
			deletedAt = r.Now
			return DrainStatus{Remaining: 1, Tier: 1, Deleted: []string{"default/solo"}}
		}
		return DrainStatus{Remaining: 1, Tier: 1, Blocked: []string{"default/solo"}, NextForceDelete: due}
	}}
	f.register(env)
	env.ExecuteWorkflow(DrainAndReplaceWorkflow, DisruptInput{NodeName: "n1", Reason: saga.ReasonManual})
	var res DisruptResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if deletedAt.IsZero() || res.Deleted != 1 {
		t.Fatalf("pod never deleted: %+v", res)
	}
	if got := deletedAt.Sub(start); got < tgp-30*time.Second || got > tgp {
		t.Fatalf("deleted after %s of workflow time, want within [4h-30s, 4h]", got)
	}
	for _, d := range f.drains {
		if !d.Deadline.Equal(start.Add(tgp)) {
			t.Fatalf("deadline %s, want start+4h", d.Deadline)
		}
	}
	if res.Outcome != PhaseDone {
		t.Fatalf("outcome %s", res.Outcome)
	}
}
