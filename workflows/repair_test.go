package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeRepair scripts the repair saga's activities and records their order.
type fakeRepair struct {
	cand          Candidate
	replacementOK bool
	remaining     int // pods the drain evicts, one a pass
	steps         []string
	checks        []DisruptInput
	drains        []DrainRequest
	events        []string
}

func (f *fakeRepair) register(env *testsuite.TestWorkflowEnvironment) {
	reg := func(fn interface{}, name string) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	step := func(s string) { f.steps = append(f.steps, s) }
	reg(func(_ context.Context, in DisruptInput) (Candidate, error) {
		f.checks = append(f.checks, in)
		return f.cand, nil
	}, ActivityCheckCandidate)
	reg(func(_ context.Context, r TaintRequest) error { step("taint:" + r.Reason); return nil }, ActivityTaintDisrupted)
	reg(func(_ context.Context, in DisruptInput) ([]NodeClaimInput, error) {
		step("plan:" + in.Reason)
		return []NodeClaimInput{{Name: "gpu-repl", NodePool: "gpu", Offerings: offerings()}}, nil
	}, ActivityPlanReplacement)
	reg(func(_ context.Context, name string) (NodeReady, error) {
		if !f.replacementOK {
			step("notready")
			return NodeReady{}, temporal.NewNonRetryableApplicationError("gone", ErrReplacementFailed, nil)
		}
		step("ready:" + name)
		return NodeReady{NodeName: "new"}, nil
	}, ActivityWaitNodeClaimReady)
	reg(func(_ context.Context, r DrainRequest) (DrainStatus, error) {
		step("drain")
		f.drains = append(f.drains, r)
		if f.remaining == 0 {
			return DrainStatus{}, nil
		}
		f.remaining--
		return DrainStatus{Remaining: f.remaining + 1, Tier: 1, Evicted: []string{"default/p"}}, nil
	}, ActivityDrainStep)
	reg(func(_ context.Context, node string) (int, error) { step("deletepods:" + node); return 2, nil }, ActivityDeleteNodePods)
	reg(func(_ context.Context, r TerminateRequest) error { step("terminate"); return nil }, ActivityTerminateInstance)
	reg(func(context.Context, TerminateRequest) error { step("gone"); return nil }, ActivityWaitNodeClaimGone)
	reg(func(_ context.Context, e EventRequest) error {
		f.events = append(f.events, e.Reason+": "+e.Message)
		return nil
	}, ActivityRecordEvent)
	env.RegisterWorkflowWithOptions(Repair, workflow.RegisterOptions{Name: RepairWorkflow})
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	env.OnWorkflow(NodeClaimWorkflow, mock.Anything, mock.Anything).Return(NodeClaimStatus{Phase: PhaseReady}, nil)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalTerminate, mock.Anything).Return(
		func(_ string, id, _ string, _ string, reason interface{}) error {
			step("signal:" + id + ":" + reason.(string))
			return nil
		})
}

func gpuCandidate() Candidate {
	return Candidate{OK: true, NodeClaim: "gpu-abcde", NodePool: "gpu", InstanceID: "i-1", TerminationGracePeriod: time.Hour}
}

func runRepair(t *testing.T, f *fakeRepair, in RepairInput) RepairResult {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env)
	env.ExecuteWorkflow(RepairWorkflow, in)
	var res RepairResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRepairReplacesThenDrainsAnUnhealthyNode(t *testing.T) {
	f := &fakeRepair{cand: gpuCandidate(), replacementOK: true, remaining: 2}
	res := runRepair(t, f, RepairInput{NodeName: "n1", Condition: "AcceleratedHardwareReady", Status: "False", Toleration: 10 * time.Minute,
		Message: "NvidiaXID79Error"})
	want := []string{"taint:unhealthy", "plan:unhealthy", "ready:gpu-repl", "drain", "drain", "drain",
		"signal:nodeclaim/gpu-abcde:disrupted: unhealthy", "gone"}
	if !slices.Equal(f.steps, want) {
		t.Fatalf("steps %v, want %v", f.steps, want)
	}
	if res.Outcome != PhaseDone || res.Evicted != 2 || !slices.Equal(res.Replacements, []string{"gpu-repl"}) {
		t.Errorf("result %+v", res)
	}
	// Nothing blocks a repair: the check only asks whether the node is Joinery's.
	if c := f.checks[0]; !c.Interruption || !c.SkipBudgets || c.Reason != saga.ReasonUnhealthy {
		t.Errorf("candidate check %+v, want an unconditional one for reason unhealthy", c)
	}
	// Drained within the termination grace period, do-not-disrupt pods too.
	d := f.drains[0]
	if !d.EvictDoNotDisrupt || d.Deadline.IsZero() || d.Deadline.Sub(d.Now) != time.Hour {
		t.Errorf("drain %+v, want do-not-disrupt evicted and the deadline an hour on", d)
	}
	if len(f.events) != 1 || !strings.Contains(f.events[0], "NodeRepair: repairing unhealthy node: AcceleratedHardwareReady=False") ||
		!strings.Contains(f.events[0], "NvidiaXID79Error") {
		t.Errorf("events %q", f.events)
	}
}

func TestRepairOfAnUnreachableNodeDeletesItsPodsAndTerminatesAtOnce(t *testing.T) {
	f := &fakeRepair{cand: gpuCandidate(), replacementOK: true}
	res := runRepair(t, f, RepairInput{NodeName: "n1", Condition: "Ready", Status: "Unknown", Unreachable: true})
	want := []string{"taint:unhealthy", "deletepods:n1", "signal:nodeclaim/gpu-abcde:disrupted: unhealthy", "gone"}
	if !slices.Equal(f.steps, want) {
		t.Fatalf("steps %v, want %v", f.steps, want)
	}
	if res.Outcome != PhaseDone || res.Deleted != 2 || len(res.Replacements) != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestRepairDrainsEvenWhenTheReplacementFails(t *testing.T) {
	f := &fakeRepair{cand: gpuCandidate(), replacementOK: false, remaining: 1}
	res := runRepair(t, f, RepairInput{NodeName: "n1", Condition: "KernelReady", Status: "False"})
	if !slices.Contains(f.steps, "drain") || f.steps[len(f.steps)-1] != "gone" {
		t.Fatalf("steps %v: the broken node must be drained and terminated", f.steps)
	}
	if res.ReplacementFailed == "" || res.Outcome != PhaseDone {
		t.Errorf("result %+v", res)
	}
}

func TestRepairSkipsANodeThatIsNotJoinerys(t *testing.T) {
	f := &fakeRepair{cand: Candidate{Why: "node n1 has no NodeClaim: Joinery did not launch it"}}
	res := runRepair(t, f, RepairInput{NodeName: "n1", Condition: "Ready", Status: "False"})
	if res.Outcome != PhaseSkipped || len(f.steps) != 0 {
		t.Errorf("result %+v steps %v", res, f.steps)
	}
}
