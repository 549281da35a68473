package workflows

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeSaga scripts the Consolidate saga's activities and keeps, in order,
// what happened to the cluster.
type fakeSaga struct {
	set           CandidateSet
	recheck       saga.Validation
	replacementOK bool

	mu        sync.Mutex
	log       []string // "taint n1", "untaint n1", "create", "launch", "ready", "evict default/n1-0", "terminate nodeclaim/...", ...
	created   []ReplacementRequest
	launched  []NodeClaimInput
	rechecked []saga.DisruptionDecision
	evicted   map[string]int // pod -> evictions
	drained   map[string]int // node -> passes
}

func (f *fakeSaga) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeSaga) register(env *testsuite.TestWorkflowEnvironment) {
	f.evicted, f.drained = map[string]int{}, map[string]int{}
	reg := func(fn interface{}, name string) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	reg(func(context.Context, CandidatesRequest) (CandidateSet, error) { return f.set, nil }, ActivityCheckCandidates)
	reg(func(_ context.Context, r TaintRequest) error {
		if r.Remove {
			f.note("untaint " + r.NodeName)
		} else {
			f.note("taint " + r.NodeName)
		}
		return nil
	}, ActivityTaintDisrupted)
	reg(func(_ context.Context, d saga.DisruptionDecision) (saga.Validation, error) {
		f.note("recheck")
		f.mu.Lock()
		f.rechecked = append(f.rechecked, d)
		f.mu.Unlock()
		return f.recheck, nil
	}, ActivityRecheckConsolidation)
	reg(func(_ context.Context, r ReplacementRequest) (NodeClaimInput, error) {
		f.note("create")
		f.mu.Lock()
		f.created = append(f.created, r)
		f.mu.Unlock()
		return NodeClaimInput{Name: r.Replacement.NodePool + "-r2d2x", NodePool: r.Replacement.NodePool, Offerings: r.Replacement.Offerings,
			Pods: r.Replacement.Pods, Private: r.Private}, nil
	}, ActivityCreateReplacement)
	reg(func(_ context.Context, name string) (NodeReady, error) {
		if !f.replacementOK {
			return NodeReady{}, temporal.NewNonRetryableApplicationError("replacement NodeClaim "+name+" was deleted before its node was Ready", ErrReplacementFailed, nil)
		}
		f.note("ready")
		return NodeReady{NodeName: "ip-10-0-9-9.ec2.internal"}, nil
	}, ActivityWaitNodeClaimReady)
	// Each node holds two pods: the first pass evicts them, the second finds it empty.
	reg(func(_ context.Context, r DrainRequest) (DrainStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.drained[r.NodeName]++
		if f.drained[r.NodeName] > 1 {
			return DrainStatus{}, nil
		}
		st := DrainStatus{Remaining: 2, Tier: 1}
		for i := 0; i < 2; i++ {
			pod := fmt.Sprintf("default/%s-%d", r.NodeName, i)
			f.evicted[pod]++
			f.log = append(f.log, "evict "+pod)
			st.Evicted = append(st.Evicted, pod)
		}
		return st, nil
	}, ActivityDrainStep)
	reg(func(context.Context, TerminateRequest) error { return nil }, ActivityTerminateInstance)
	reg(func(_ context.Context, r TerminateRequest) error { f.note("gone " + r.NodeClaim); return nil }, ActivityWaitNodeClaimGone)
	reg(func(context.Context, EventRequest) error { return nil }, ActivityRecordEvent)
	env.RegisterWorkflowWithOptions(Consolidate, workflow.RegisterOptions{Name: ConsolidateWorkflow})
	// The replacement's lifecycle (WaitNodeClaimReady says whether it gets
	// Ready): one that will fail runs until told to terminate, as the real
	// one does; a good one ends at once (the test suite waits for children).
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		f.note("launch " + in.Name)
		f.mu.Lock()
		f.launched = append(f.launched, in)
		f.mu.Unlock()
		if f.replacementOK {
			return NodeClaimStatus{Phase: PhaseReady}, nil
		}
		var reason string
		workflow.GetSignalChannel(ctx, SignalTerminate).Receive(ctx, &reason)
		f.note("terminate " + NodeClaimWorkflowID(in.Name))
		return NodeClaimStatus{Phase: PhaseTerminated}, nil
	}, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalTerminate, mock.Anything).Return(
		func(_ string, id, _ string, _ string, _ interface{}) error {
			f.note("terminate " + id)
			return nil
		})
}

// index is the position of the first log entry with prefix p (-1: none);
// last the position of the last one.
func (f *fakeSaga) index(p string) int {
	for i, s := range f.log {
		if strings.HasPrefix(s, p) {
			return i
		}
	}
	return -1
}

func (f *fakeSaga) last(p string) int {
	for i := len(f.log) - 1; i >= 0; i-- {
		if strings.HasPrefix(f.log[i], p) {
			return i
		}
	}
	return -1
}

func (f *fakeSaga) count(p string) int {
	n := 0
	for _, s := range f.log {
		if strings.HasPrefix(s, p) {
			n++
		}
	}
	return n
}

func sagaCandidates(nodes ...string) CandidateSet {
	var set CandidateSet
	for i, n := range nodes {
		set.Candidates = append(set.Candidates, Candidate{OK: true, NodeName: n, NodeClaim: fmt.Sprintf("general-purpose-c%d", i), NodePool: "general-purpose",
			InstanceID: fmt.Sprintf("i-%d", i)})
	}
	return set
}

func multiDecision() saga.DisruptionDecision {
	return saga.DisruptionDecision{Method: saga.MethodMultiNode, Reason: saga.ReasonUnderused, Nodes: []string{"n1", "n2", "n3"}, Replace: true,
		Replacement: &saga.Replacement{NodePool: "general-purpose", InstanceTypes: []string{"m6i.large", "m6a.large"}, Offerings: offerings()[:2],
			Requirements: []saga.Requirement{{Key: "karpenter.sh/capacity-type", Operator: "In", Values: []string{"spot"}}},
			Requests:     map[string]string{"cpu": "6", "pods": "6"}, Pods: 6, USDPerHour: 0.04, MaxUSDPerHour: 0.05},
		SavingUSDPerHour: 0.25}
}

// A multi-node consolidation is one saga: every node is tainted before the
// replacement launches, exactly one replacement (the validated plan, as
// is) is launched and Ready before the first eviction, each pod is evicted
// once, and every node is terminated through its NodeClaim workflow.
func TestConsolidateTaintsAllThenLaunchesOneReadyReplacementBeforeEvicting(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeSaga{set: sagaCandidates("n1", "n2", "n3"), recheck: saga.Validation{Valid: true}, replacementOK: true}
	f.register(env)
	d := multiDecision()
	env.ExecuteWorkflow(ConsolidateWorkflow, ConsolidateInput{Decision: d})
	var res ConsolidateResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseDone || !reflect.DeepEqual(res.Nodes, d.Nodes) || res.Replacement != "general-purpose-r2d2x" || res.Evicted != 6 {
		t.Fatalf("result %+v", res)
	}
	t.Logf("saga: %s", strings.Join(f.log, "; "))
	if f.count("taint ") != 3 || f.last("taint ") > f.index("recheck") || f.index("recheck") > f.index("create") {
		t.Errorf("all three nodes must be tainted, then the saving re-checked, before the replacement is created: %v", f.log)
	}
	if f.count("create") != 1 || f.count("launch ") != 1 || f.index("launch ") > f.index("ready") || f.index("ready") > f.index("evict ") {
		t.Errorf("exactly one replacement, Ready before the first eviction: %v", f.log)
	}
	// The executed replacement is the validated one.
	if len(f.created) != 1 || !reflect.DeepEqual(f.created[0].Replacement, *d.Replacement) || !reflect.DeepEqual(f.created[0].For, d.Nodes) {
		t.Errorf("created %+v, want the decision's plan %+v", f.created, *d.Replacement)
	}
	if len(f.launched) != 1 || !reflect.DeepEqual(f.launched[0].Offerings, d.Replacement.Offerings) {
		t.Errorf("launched %+v", f.launched)
	}
	if len(f.rechecked) != 1 || !reflect.DeepEqual(f.rechecked[0], d) {
		t.Errorf("re-checked %+v", f.rechecked)
	}
	if len(f.evicted) != 6 {
		t.Errorf("evicted %v, want 6 pods", f.evicted)
	}
	for pod, n := range f.evicted {
		if n != 1 {
			t.Errorf("pod %s evicted %d times", pod, n)
		}
	}
	var terminated []string
	for _, l := range f.log {
		if strings.HasPrefix(l, "terminate ") {
			terminated = append(terminated, strings.TrimPrefix(l, "terminate "))
		}
	}
	sort.Strings(terminated)
	want := []string{"nodeclaim/general-purpose-c0", "nodeclaim/general-purpose-c1", "nodeclaim/general-purpose-c2"}
	if !reflect.DeepEqual(terminated, want) || f.count("gone ") != 3 || f.index("terminate ") < f.last("evict ") {
		t.Errorf("terminated %v after the drains, want %v", terminated, want)
	}
	if f.count("untaint ") != 0 {
		t.Errorf("taints removed on success: %v", f.log)
	}
}

// Compensation: a replacement that fails is told to terminate, every node
// is untainted, and nothing is evicted.
func TestConsolidateCompensatesAFailedReplacement(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeSaga{set: sagaCandidates("n1", "n2", "n3"), recheck: saga.Validation{Valid: true}}
	f.register(env)
	env.ExecuteWorkflow(ConsolidateWorkflow, ConsolidateInput{Decision: multiDecision()})
	err := env.GetWorkflowError()
	if err == nil || !IsReplacementFailed(err) {
		t.Fatalf("error %v, want a replacement failure", err)
	}
	t.Logf("saga: %s", strings.Join(f.log, "; "))
	if f.count("untaint ") != 3 || f.index("untaint ") < f.index("launch ") {
		t.Errorf("every node must be untainted after the failure: %v", f.log)
	}
	if f.index("terminate nodeclaim/general-purpose-r2d2x") < 0 {
		t.Errorf("the failed replacement was not told to terminate: %v", f.log)
	}
	if len(f.evicted) != 0 || len(f.drained) != 0 || f.count("gone ") != 0 || f.count("terminate nodeclaim/general-purpose-c") != 0 {
		t.Errorf("old nodes touched: evicted %v drained %v log %v", f.evicted, f.drained, f.log)
	}
}

// The saving, re-checked after the taint and before anything launches: if
// it is gone the saga stops, untaints every node and launches nothing.
func TestConsolidateAbortsWhenTheSavingIsGoneBeforeActing(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeSaga{set: sagaCandidates("n1", "n2", "n3"), replacementOK: true,
		recheck: saga.Validation{Why: "no longer cheaper: the replacement may cost 0.0500 USD/hour, the nodes 0.0450"}}
	f.register(env)
	env.ExecuteWorkflow(ConsolidateWorkflow, ConsolidateInput{Decision: multiDecision()})
	var res ConsolidateResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseSkipped || res.Why != "aborted before acting: "+f.recheck.Why {
		t.Fatalf("result %+v", res)
	}
	if f.count("taint ") != 3 || f.count("untaint ") != 3 || f.index("untaint ") < f.index("recheck") {
		t.Errorf("taints %v", f.log)
	}
	if f.count("create") != 0 || f.count("launch ") != 0 || len(f.evicted) != 0 || f.count("terminate ") != 0 {
		t.Errorf("acted after the saving was gone: %v", f.log)
	}
}

// A consolidation goes all or nothing: one node that may no longer go
// (here a do-not-disrupt pod) stops it before any taint.
func TestConsolidateSkipsWhenANodeMayNoLongerGo(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	set := sagaCandidates("n1", "n2", "n3")
	set.Candidates[1] = Candidate{NodeName: "n2", Why: "pod default/x is annotated karpenter.sh/do-not-disrupt"}
	set.Why = "node n2: pod default/x is annotated karpenter.sh/do-not-disrupt"
	f := &fakeSaga{set: set, recheck: saga.Validation{Valid: true}, replacementOK: true}
	f.register(env)
	env.ExecuteWorkflow(ConsolidateWorkflow, ConsolidateInput{Decision: multiDecision()})
	var res ConsolidateResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseSkipped || res.Why != set.Why || len(f.log) != 0 {
		t.Fatalf("result %+v, log %v", res, f.log)
	}
}

// Emptiness keeps the nodes that still may go (Karpenter): two of three
// are tainted, drained and terminated; nothing is launched.
func TestConsolidateEmptinessGoesOnWithTheNodesThatStillMayGo(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	set := sagaCandidates("n1", "n2", "n3")
	set.Candidates[2] = Candidate{NodeName: "n3", Why: "NodePool general-purpose disruption budget allows no more nodes to be disrupted at once"}
	f := &fakeSaga{set: set, recheck: saga.Validation{Valid: true}}
	f.register(env)
	env.ExecuteWorkflow(ConsolidateWorkflow, ConsolidateInput{Decision: saga.DisruptionDecision{Method: saga.MethodEmptiness, Reason: saga.ReasonEmpty, Nodes: []string{"n1", "n2", "n3"}}})
	var res ConsolidateResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseDone || !reflect.DeepEqual(res.Nodes, []string{"n1", "n2"}) || res.Replacement != "" {
		t.Fatalf("result %+v", res)
	}
	if f.count("taint ") != 2 || f.count("create") != 0 || f.drained["n3"] != 0 || f.count("gone ") != 2 {
		t.Errorf("log %v", f.log)
	}
	if len(f.rechecked) != 1 || !reflect.DeepEqual(f.rechecked[0].Nodes, []string{"n1", "n2"}) {
		t.Errorf("re-checked %+v, want n1, n2 only", f.rechecked)
	}
}
