package disruption

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every NodeClaim candidate filtering drops comes back with every reason,
// in Karpenter's words where Karpenter has them, naming the pods and
// PDBs; the kept ones are exactly Candidates'.
func TestFilterSaysWhyEachNodeIsNotACandidate(t *testing.T) {
	pool := testPool("general-purpose")
	owned := func(name string) Pod { return Pod{Name: name, Active: true, Reschedulable: true, Controlled: true} }
	until := t0.Add(20 * time.Minute)
	cases := []struct {
		name   string
		change func(*Claim)
		want   []Block
	}{
		{"a candidate", func(s *Claim) { s.Pods = []Pod{owned("default/a")} }, nil},
		{"no node yet", func(s *Claim) { s.Claim.Status.NodeName, s.Node = "", nil },
			[]Block{{Kind: BlockNoNode, Message: "Nodeclaim does not have an associated node"}}},
		{"being deleted", func(s *Claim) { s.Claim.DeletionTimestamp = &metav1.Time{Time: t0} },
			[]Block{{Kind: BlockDeleting, Message: "Node is deleting or marked for deletion"}}},
		{"not initialized", func(s *Claim) { s.Claim.Status.Conditions = nil },
			[]Block{{Kind: BlockNotInitialized, Message: "Node isn't initialized"}}},
		{"being disrupted", func(s *Claim) {
			s.Node.Spec.Taints = []corev1.Taint{{Key: apiv1.TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule}}
		}, []Block{{Kind: BlockDisrupting, Message: "Node is being disrupted"}}},
		{"pool gone", func(s *Claim) { s.Pool = nil },
			[]Block{{Kind: BlockNodePoolNotFound, Message: "NodePool not found (NodePool=general-purpose)"}}},
		{"every reason at once", func(s *Claim) {
			s.Nominating = true
			s.Node.Annotations = map[string]string{apiv1.AnnotationDoNotDisrupt: "true"}
			s.Pods = []Pod{
				owned("default/a"),
				{Name: "jobs/train", Active: true, Reschedulable: true, Controlled: true, DoNotDisrupt: true, DoNotDisruptUntil: until},
				{Name: "jobs/forever", Active: true, Reschedulable: true, Controlled: true, DoNotDisrupt: true},
				{Name: "default/web-1", Active: true, Reschedulable: true, Controlled: true, Blocked: true, PDBs: []string{"default/web"}},
				{Name: "default/web-2", Active: true, Reschedulable: true, Controlled: true, Blocked: true, PDBs: []string{"default/web"}},
				{Name: "default/db-0", Active: true, Reschedulable: true, Controlled: true, Blocked: true, PDBs: []string{"default/db", "default/all"}},
				{Name: "default/scratch", Active: true, Reschedulable: true},
				{Name: "default/done", Active: false, DoNotDisrupt: true},
			}
		}, []Block{
			{Kind: BlockNominated, Message: "Node is nominated for a pending pod"},
			{Kind: BlockDoNotDisruptNode, Message: `Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation`},
			{Kind: BlockDoNotDisruptPod, Message: `Pod jobs/forever has "karpenter.sh/do-not-disrupt" annotation; ` +
				`Pod jobs/train has "karpenter.sh/do-not-disrupt" annotation until 2026-11-29T12:20:00Z`},
			{Kind: BlockPDB, Message: "Eviction does not support multiple PDBs (PodDisruptionBudgets default/db, default/all select pod default/db-0); " +
				"PDB default/web prevents pod evictions (pods default/web-1, default/web-2)"},
			{Kind: BlockNoController, Message: "Pod default/scratch has no controller: evicting it would lose it"},
		}},
		{"one PDB over many pods", func(s *Claim) {
			for i := 0; i < 5; i++ {
				s.Pods = append(s.Pods, Pod{Name: fmt.Sprintf("default/web-%d", i), Active: true, Reschedulable: true, Controlled: true,
					Blocked: true, PDBs: []string{"default/web"}})
			}
		}, []Block{{Kind: BlockPDB, Message: "PDB default/web prevents pod evictions (pods default/web-0, default/web-1, default/web-2 and 2 more)"}}},
		{"many pods: three named, then a count", func(s *Claim) {
			for i := 0; i < 5; i++ {
				s.Pods = append(s.Pods, Pod{Name: fmt.Sprintf("default/bare-%d", i), Active: true, Reschedulable: true})
			}
		}, []Block{{Kind: BlockNoController, Message: "Pod default/bare-0 has no controller: evicting it would lose it; " +
			"Pod default/bare-1 has no controller: evicting it would lose it; Pod default/bare-2 has no controller: evicting it would lose it; and 2 more pods"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, nc := testClaim(0, pool)
			nc.Labels = map[string]string{apiv1.LabelNodePool: pool.Name}
			s := Claim{Claim: nc, Node: node, Pool: pool, Price: 0.1}
			c.change(&s)
			cands, blocked := Filter([]Claim{s})
			// The pods' order does not change the messages.
			rev := s
			rev.Pods = nil
			for i := len(s.Pods) - 1; i >= 0; i-- {
				rev.Pods = append(rev.Pods, s.Pods[i])
			}
			if _, again := Filter([]Claim{rev}); !reflect.DeepEqual(again, blocked) {
				t.Fatalf("pods reversed: %+v, want %+v", again, blocked)
			}
			if !reflect.DeepEqual(nodeNames(cands), nodeNames(Candidates([]Claim{s}))) {
				t.Fatalf("Filter kept %v, Candidates %v", nodeNames(cands), nodeNames(Candidates([]Claim{s})))
			}
			if c.want == nil {
				if len(cands) != 1 || len(blocked) != 0 {
					t.Fatalf("candidates %v, blocked %+v", nodeNames(cands), blocked)
				}
				return
			}
			if len(cands) != 0 || len(blocked) != 1 {
				t.Fatalf("candidates %v, blocked %+v", nodeNames(cands), blocked)
			}
			b := blocked[0]
			if b.NodeClaim != nc.Name || b.NodePool != pool.Name || (s.Node != nil && b.Node != node.Name) {
				t.Errorf("names %+v", b)
			}
			if !reflect.DeepEqual(b.Blocks, c.want) {
				t.Errorf("blocks\n got %+v\nwant %+v", b.Blocks, c.want)
			}
		})
	}
}

// The Event each kind is published under: blocks of candidate filtering
// and budgets are DisruptionBlocked, consolidation's verdicts
// Unconsolidatable; a drain under way and the consolidateAfter clock none.
func TestBlockKindEvents(t *testing.T) {
	want := map[BlockKind]string{
		BlockBudget: EventDisruptionBlocked, BlockPDB: EventDisruptionBlocked, BlockDoNotDisruptPod: EventDisruptionBlocked,
		BlockDoNotDisruptNode: EventDisruptionBlocked, BlockNoController: EventDisruptionBlocked, BlockNotInitialized: EventDisruptionBlocked,
		BlockNoCheaper: EventUnconsolidatable, BlockWouldNotFit: EventUnconsolidatable, BlockWhenEmpty: EventUnconsolidatable,
		BlockConsolidationDisabled: EventUnconsolidatable, BlockSpotToSpot: EventUnconsolidatable,
		BlockDisrupting: "", BlockConsolidateAfter: "",
	}
	for k, ev := range want {
		if got := k.Event(); got != ev {
			t.Errorf("%s: %q, want %q", k, got, ev)
		}
	}
	if len(BlockKinds) != 18 {
		t.Errorf("%d kinds listed", len(BlockKinds))
	}
	filtering := 0
	for _, k := range BlockKinds {
		if k.Filtering() {
			filtering++
		}
	}
	if filtering != 10 || BlockBudget.Filtering() || !BlockPDB.Filtering() {
		t.Errorf("%d filtering kinds", filtering)
	}
}

// A pass says why the candidates it did not take stayed: budgets, the
// pool's consolidation settings, the consolidateAfter clock and the
// single-node simulations' verdicts (the pod that fits nowhere named).
func TestPassBlocksExplainTheCandidatesNotTaken(t *testing.T) {
	pool := testPool("general-purpose")
	noBudget := testPool("frozen")
	noBudget.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "0"}}
	whenEmpty := testPool("batch")
	whenEmpty.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmpty
	never := testPool("pinned")
	never.Spec.Disruption.ConsolidateAfter = "Never"
	slow := testPool("slow")
	slow.Spec.Disruption.ConsolidateAfter = "2h" // initialized an hour ago
	mk := func(i int, p *apiv1.NodePool, pods int, spot bool) Candidate {
		node, nc := testClaim(i, p)
		if spot {
			node.Labels[apiv1.LabelCapacityType] = apiv1.CapacityTypeSpot
		}
		return Candidate{Node: node, Claim: nc, Pool: p, Price: 0.5, Pods: pods}
	}
	cands := []Candidate{
		mk(0, pool, 2, false),      // would not fit
		mk(1, pool, 2, false),      // no cheaper replacement
		mk(2, pool, 2, true),       // spot with 2 cheaper spot types
		mk(3, pool, 2, false),      // taken by the decision
		mk(4, noBudget, 2, false),  // budget 0
		mk(5, whenEmpty, 2, false), // WhenEmpty, not empty
		mk(6, never, 0, false),     // consolidateAfter Never
		mk(7, slow, 2, false),      // consolidateAfter not elapsed
		mk(8, pool, 0, false),      // empty, its clock just started
		mk(9, pool, 2, false),      // consolidation did not reach it
	}
	p := &Pass{Now: t0, Candidates: cands, Pools: map[string]PoolNodes{
		pool.Name: {Nodes: 6}, noBudget.Name: {Nodes: 1}, whenEmpty.Name: {Nodes: 1}, never.Name: {Nodes: 1}, slow.Name: {Nodes: 1}},
		SpotToSpot: true}
	cands[8].Claim.Status.LastPodEventTime = &metav1.Time{Time: t0.Add(-10 * time.Second)} // its last pod just left
	trace := &Trace{}
	p.Simulate = trace.Wrap(func(nodes []string) solver.RemovalResult {
		switch nodes[0] {
		case cands[0].Node.Name:
			return solver.RemovalResult{Reason: "pod default/big cannot move: no instance type in NodePool general-purpose has cpu >= 64", Pod: "default/big"}
		case cands[1].Node.Name:
			return solver.RemovalResult{Reason: "the replacement is not cheaper than the candidates", NotCheaper: true}
		case cands[2].Node.Name:
			return solver.RemovalResult{Possible: true, Replacement: spotReplacement(0.1, 0.2, 0.9), SavingUSDPerHour: 0.4}
		}
		return solver.RemovalResult{Possible: true, SavingUSDPerHour: 0.5}
	})
	for _, c := range cands[:4] {
		p.Simulate([]string{c.Node.Name})
	}
	p.Simulate([]string{cands[0].Node.Name, cands[9].Node.Name}) // a multi-node try records nothing
	d := saga.DisruptionDecision{Method: saga.MethodSingleNode, Nodes: []string{cands[3].Node.Name}}
	got := map[string][]Block{}
	for _, b := range PassBlocks(p, d, trace) {
		if b.NodeClaim == "" || b.NodePool == "" {
			t.Errorf("unnamed %+v", b)
		}
		got[b.Node] = b.Blocks
	}
	want := map[string][]Block{
		cands[0].Node.Name: {{Kind: BlockWouldNotFit, Message: "Pod default/big cannot move: no instance type in NodePool general-purpose has cpu >= 64"}},
		cands[1].Node.Name: {{Kind: BlockNoCheaper, Message: "Can't replace with a cheaper node"}},
		cands[2].Node.Name: {{Kind: BlockSpotToSpot, Message: "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 2"}},
		cands[4].Node.Name: {{Kind: BlockBudget, BudgetReason: BudgetReasonUnderutilized,
			Message: "No allowed disruptions for disruption reason Underutilized due to blocking budget (NodePool frozen allows 0, 0 being disrupted)"}},
		cands[5].Node.Name: {{Kind: BlockWhenEmpty, Message: `NodePool "batch" has consolidation policy WhenEmpty, but node is not empty`}},
		cands[6].Node.Name: {{Kind: BlockConsolidationDisabled, Message: `NodePool "pinned" has consolidation disabled`}},
		cands[7].Node.Name: {{Kind: BlockConsolidateAfter, Message: "Node is not consolidatable yet: consolidateAfter 2h has not elapsed"}},
		cands[8].Node.Name: {{Kind: BlockConsolidateAfter, Message: "Node is empty, consolidateAfter 1m has not elapsed"}},
	}
	if !reflect.DeepEqual(got, want) {
		for n, bs := range got {
			t.Logf("%s: %+v", n, bs)
		}
		t.Fatalf("blocks differ from %+v", want)
	}
}

// Merge joins by NodeClaim; Report lists at most max nodes, blocks before
// states (launching nodes last), and counts every node once per kind.
func TestMergeAndReport(t *testing.T) {
	a := []Blocked{
		{NodeClaim: "c-launching", NodePool: "p", Blocks: []Block{{Kind: BlockNoNode, Message: "Nodeclaim does not have an associated node"}}},
		{NodeClaim: "c-2", Node: "n-2", NodePool: "p", Blocks: []Block{{Kind: BlockPDB, Message: "PDB x"}, {Kind: BlockPDB, Message: "PDB y"}}},
		{NodeClaim: "c-3", Node: "n-3", NodePool: "p", Blocks: []Block{{Kind: BlockConsolidateAfter, Message: "wait"}}},
	}
	b := []Blocked{
		{NodeClaim: "c-2", Node: "n-2", NodePool: "p", Blocks: []Block{{Kind: BlockBudget, Message: "budget"}}},
		{NodeClaim: "c-1", Node: "n-1", NodePool: "p", Blocks: []Block{{Kind: BlockWouldNotFit, Message: "Pod x cannot move"}}},
	}
	m := Merge(a, b)
	if len(m) != 4 || len(m[1].Blocks) != 3 || m[1].Blocks[2].Kind != BlockBudget || len(a[1].Blocks) != 2 {
		t.Fatalf("merged %+v (input %+v)", m, a[1])
	}
	rep := Report(m, 2)
	if rep.Total != 4 || len(rep.Nodes) != 2 || rep.Nodes[0].Node != "n-1" || rep.Nodes[1].Node != "n-2" {
		t.Fatalf("report %+v", rep)
	}
	if r := rep.Nodes[0].Reasons[0]; r != (saga.BlockReason{Reason: "would_not_fit", Event: EventUnconsolidatable, Message: "Pod x cannot move"}) {
		t.Fatalf("reason %+v", r)
	}
	wantCounts := map[string]int{"pdb": 1, "budget": 1, "would_not_fit": 1, "no_node": 1, "consolidate_after": 1}
	if !reflect.DeepEqual(rep.ByReason, wantCounts) {
		t.Fatalf("counts %v, want %v", rep.ByReason, wantCounts)
	}
	if all := Report(m, 10); all.Nodes[2].Node != "n-3" || all.Nodes[3].NodeClaim != "c-launching" {
		t.Fatalf("order %+v", all.Nodes)
	}
}

// The workflow sends back the digest of the report it decoded from its
// history: a report and its JSON round trip have the same digest, and a
// changed message another.
func TestReportDigestSurvivesJSON(t *testing.T) {
	rep := Report([]Blocked{
		{NodeClaim: "c-1", Node: "n-1", NodePool: "p", Blocks: []Block{{Kind: BlockPDB, Message: "PDB default/web prevents pod evictions (pod default/web-1)"}}},
		{NodeClaim: "c-2", NodePool: "p", Blocks: []Block{{Kind: BlockNoNode, Message: "Nodeclaim does not have an associated node"}}},
	}, saga.MaxBlockedReported)
	b, err := json.Marshal(workflows.ConsolidationState{LastPass: &workflows.PassReport{At: t0, BlockedReport: rep}})
	if err != nil {
		t.Fatal(err)
	}
	var back workflows.ConsolidationState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.LastPass.BlockedReport.Digest() != rep.Digest() {
		t.Fatalf("digest changed over JSON: %s", b)
	}
	rep.Nodes[0].Reasons[0].Message += "!"
	if back.LastPass.BlockedReport.Digest() == rep.Digest() {
		t.Fatal("a changed message has the same digest")
	}
	if (saga.BlockedReport{}).Digest() == back.LastPass.BlockedReport.Digest() {
		t.Fatal("empty and full reports share a digest")
	}
}
