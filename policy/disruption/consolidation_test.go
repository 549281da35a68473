package disruption

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func testPool(name string) *apiv1.NodePool {
	p := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	p.Spec.Disruption.ConsolidateAfter = "1m"
	return p
}

// testClaim is an initialized NodeClaim (an hour ago, created two hours
// ago) with its node.
func testClaim(i int, pool *apiv1.NodePool) (*corev1.Node, *apiv1.NodeClaim) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-0-0-%d.ec2.internal", 10+i),
		Labels: map[string]string{apiv1.LabelNodePool: pool.Name}}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", pool.Name, i),
		CreationTimestamp: metav1.NewTime(t0.Add(-2 * time.Hour))}}
	nc.Status.NodeName = node.Name
	nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}
	return node, nc
}

func nodeNames(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Node.Name)
	}
	return out
}

func TestCandidatesKeepOnlyNodesThatMayBeTaken(t *testing.T) {
	pool := testPool("general-purpose")
	owned := Pod{Active: true, Reschedulable: true, Controlled: true}
	cases := []struct {
		name   string
		change func(*Claim)
		keep   bool
		pods   int
	}{
		{"plain node with two owned pods", func(s *Claim) { s.Pods = []Pod{owned, owned} }, true, 2},
		{"daemon and finished pods do not count", func(s *Claim) {
			s.Pods = []Pod{{Active: true, Controlled: true}, {Active: false, DoNotDisrupt: true}}
		}, true, 0},
		{"no node name yet", func(s *Claim) { s.Claim.Status.NodeName = "" }, false, 0},
		{"being deleted", func(s *Claim) { s.Claim.DeletionTimestamp = &metav1.Time{Time: t0} }, false, 0},
		{"not initialized", func(s *Claim) { s.Claim.Status.Conditions = nil }, false, 0},
		{"holds nominations", func(s *Claim) { s.Nominating = true }, false, 0},
		{"node not in the cache", func(s *Claim) { s.Node = nil }, false, 0},
		{"node tainted disrupted", func(s *Claim) {
			s.Node.Spec.Taints = []corev1.Taint{{Key: apiv1.TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule}}
		}, false, 0},
		{"node do-not-disrupt", func(s *Claim) { s.Node.Annotations = map[string]string{apiv1.AnnotationDoNotDisrupt: "true"} }, false, 0},
		{"pool gone", func(s *Claim) { s.Pool = nil }, false, 0},
		{"pod do-not-disrupt", func(s *Claim) { s.Pods = []Pod{owned, {Active: true, DoNotDisrupt: true}} }, false, 0},
		{"bare pod", func(s *Claim) { s.Pods = []Pod{{Active: true, Reschedulable: true}} }, false, 0},
		{"pod behind a PDB allowing nothing", func(s *Claim) {
			s.Pods = []Pod{owned, {Active: true, Reschedulable: true, Controlled: true, Blocked: true}}
		}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, nc := testClaim(0, pool)
			s := Claim{Claim: nc, Node: node, Pool: pool, Price: 0.1}
			c.change(&s)
			got := Candidates([]Claim{s})
			if !c.keep {
				if len(got) != 0 {
					t.Fatalf("kept %v", nodeNames(got))
				}
				return
			}
			if len(got) != 1 || got[0].Pods != c.pods || got[0].Price != 0.1 || got[0].Pool != pool {
				t.Fatalf("got %+v, want one candidate with %d pods", got, c.pods)
			}
		})
	}
}

func TestUnsettledWhilePendingOrLaunching(t *testing.T) {
	pool := testPool("general-purpose")
	_, ready := testClaim(0, pool)
	_, launching := testClaim(1, pool)
	launching.Status.Conditions = nil
	cases := []struct {
		pending int
		claims  []*apiv1.NodeClaim
		want    string
	}{
		{0, []*apiv1.NodeClaim{ready}, ""},
		{3, []*apiv1.NodeClaim{ready}, "not quiet: 3 pods pending"},
		{0, []*apiv1.NodeClaim{ready, launching}, "not quiet: nodeclaim general-purpose-01 is launching"},
		{2, []*apiv1.NodeClaim{launching}, "not quiet: 2 pods pending"},
	}
	for _, c := range cases {
		if got := Unsettled(c.pending, c.claims); got != c.want {
			t.Errorf("Unsettled(%d, ...) = %q, want %q", c.pending, got, c.want)
		}
	}
}

// A 10% budget over 11 nodes allows two disruptions at a time (rounded
// up, as Karpenter). Single-node consolidation must still consider every
// candidate, most expensive per pod first (before, the budget kept only
// the first NodeClaims by name, and a cluster whose first node could not
// move stayed as it was for good: the chaos run's +64% cost); multi-node
// gets only as many as the budget allows.
func TestConsolidatableBudgetOrder(t *testing.T) {
	pool := testPool("general-purpose")
	pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "10%"}}
	var cands []Candidate
	for i := 0; i < 11; i++ {
		node, nc := testClaim(i, pool)
		// Node 7 costs the most per pod; node 0 (first by name) the least.
		price := 0.05 + 0.001*float64(i)
		if i == 7 {
			price = 0.5
		}
		cands = append(cands, Candidate{Node: node, Claim: nc, Pool: pool, Price: price, Pods: 2})
	}
	pass := func(now time.Time) *Pass {
		return &Pass{Now: now, Candidates: cands, Pools: map[string]PoolNodes{pool.Name: {Nodes: 11}}}
	}
	cases := []struct {
		name  string
		now   time.Time
		multi bool
		want  []string
	}{
		{"single-node: every candidate, most expensive per pod first", t0, false, []string{
			"ip-10-0-0-17.ec2.internal", "ip-10-0-0-20.ec2.internal", "ip-10-0-0-19.ec2.internal", "ip-10-0-0-18.ec2.internal",
			"ip-10-0-0-16.ec2.internal", "ip-10-0-0-15.ec2.internal", "ip-10-0-0-14.ec2.internal", "ip-10-0-0-13.ec2.internal",
			"ip-10-0-0-12.ec2.internal", "ip-10-0-0-11.ec2.internal", "ip-10-0-0-10.ec2.internal"}},
		{"multi-node: as many as the budget allows", t0, true, []string{"ip-10-0-0-17.ec2.internal", "ip-10-0-0-20.ec2.internal"}},
		{"too young for consolidateAfter", t0.Add(-time.Hour + 30*time.Second), false, nil},
	}
	for _, c := range cases {
		if got := nodeNames(Consolidatable(pass(c.now), c.multi)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Two nodes already being disrupted use up the budget.
	p := pass(t0)
	p.Pools[pool.Name] = PoolNodes{Nodes: 11, Disrupting: 2}
	if got := Consolidatable(p, false); len(got) != 0 {
		t.Errorf("budget used up, still kept %v", nodeNames(got))
	}
}

func spotReplacement(prices ...float64) *solver.NewNodeClaim {
	n := &solver.NewNodeClaim{}
	for i, pr := range prices {
		n.InstanceTypes = append(n.InstanceTypes, solver.InstanceTypeOption{
			Type:      &catalog.InstanceType{Name: fmt.Sprintf("t%d.large", i)},
			Offerings: []catalog.Offering{{Zone: "us-east-1a", CapacityType: apiv1.CapacityTypeSpot, Price: pr, Available: true}},
		})
	}
	return n
}

func TestDecideTriesTheMethodsInOrder(t *testing.T) {
	pool := testPool("general-purpose")
	drifted := func(c *Candidate) {
		c.Claim.Annotations = map[string]string{AnnotationNodePoolHash: "stale", AnnotationNodePoolHashVersion: NodePoolHashVersion}
	}
	expired := func(c *Candidate) { c.Claim.Spec.ExpireAfter = "90m" }
	fitsAny := func(nodes []string) solver.RemovalResult {
		return solver.RemovalResult{Possible: true, SavingUSDPerHour: 0.1 * float64(len(nodes))}
	}
	fitsOne := func(nodes []string) solver.RemovalResult {
		return solver.RemovalResult{Possible: len(nodes) == 1, SavingUSDPerHour: 0.1}
	}
	cases := []struct {
		name     string
		setup    func(cs []Candidate, p *Pass)
		method   string
		nodes    []string
		why      string
		replace  bool
		budgetNo bool // the pool's budget allows nothing
	}{
		{"empty for longer than consolidateAfter since the last pod event beats drift", func(cs []Candidate, p *Pass) {
			cs[0].Pods, cs[1].Pods = 0, 0
			cs[0].Claim.Status.LastPodEventTime = &metav1.Time{Time: t0.Add(-2 * time.Minute)}
			cs[1].Claim.Status.LastPodEventTime = &metav1.Time{Time: t0.Add(-30 * time.Second)}
			drifted(&cs[2])
		}, saga.MethodEmptiness, []string{"ip-10-0-0-10.ec2.internal"}, "1 node(s) empty, consolidateAfter passed since their last pod event", false, false},
		{"empty but a pod left 30s ago is not taken", func(cs []Candidate, p *Pass) {
			cs[0].Pods = 0
			cs[0].Claim.Status.LastPodEventTime = &metav1.Time{Time: t0.Add(-30 * time.Second)}
			drifted(&cs[2])
		}, saga.MethodDrift, []string{"ip-10-0-0-12.ec2.internal"}, "drifted: NodePool general-purpose template changed", true, false},
		{"an expired node is not a consolidation decision (the expiration controller deletes it)", func(cs []Candidate, p *Pass) {
			expired(&cs[0])
			drifted(&cs[1])
		}, saga.MethodDrift, []string{"ip-10-0-0-11.ec2.internal"}, "drifted: NodePool general-purpose template changed", true, false},
		{"drift waits for its budget", func(cs []Candidate, p *Pass) {
			expired(&cs[0])
			drifted(&cs[1])
		}, "", nil, "nothing to do among 3 candidates", false, true},
		{"multi-node takes the longest prefix that fits", func(cs []Candidate, p *Pass) {
			p.Pools[pool.Name] = PoolNodes{Nodes: 3}
			pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
			p.Simulate = fitsAny
		}, saga.MethodMultiNode, []string{"ip-10-0-0-12.ec2.internal", "ip-10-0-0-11.ec2.internal", "ip-10-0-0-10.ec2.internal"},
			"3 of 3 candidates fit on the rest, saving 0.3000 USD/hour", false, false},
		{"single-node when no two fit together", func(cs []Candidate, p *Pass) {
			p.Simulate = fitsOne
		}, saga.MethodSingleNode, []string{"ip-10-0-0-12.ec2.internal"}, "pods fit on the rest, saving 0.1000 USD/hour", false, false},
		{"single-node replacement launches strictly cheaper", func(cs []Candidate, p *Pass) {
			p.Simulate = func(nodes []string) solver.RemovalResult {
				if len(nodes) != 1 {
					return solver.RemovalResult{}
				}
				nn := newClaim([]apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeOnDemand)},
					opt("c6a.large", "on-demand@us-east-1a=0.0765"), opt("m6a.large", "on-demand@us-east-1a=0.2"))
				return solver.RemovalResult{Possible: true, Replacement: nn, CandidatesUSDPerHour: 0.12, SavingUSDPerHour: 0.12 - 0.0765}
			}
		}, saga.MethodSingleNode, []string{"ip-10-0-0-12.ec2.internal"}, "pods fit on the rest plus one c6a.large, saving 0.0435 USD/hour", true, false},
		{"spot-to-spot is off by default", func(cs []Candidate, p *Pass) {
			for i := range cs {
				cs[i].Node.Labels[apiv1.LabelCapacityType] = apiv1.CapacityTypeSpot
			}
			p.Simulate = func(nodes []string) solver.RemovalResult {
				if len(nodes) != 1 {
					return solver.RemovalResult{}
				}
				return solver.RemovalResult{Possible: true, Replacement: spotReplacement(0.01, 0.02), SavingUSDPerHour: 0.05}
			}
		}, "", nil, "nothing to do among 3 candidates", false, false},
		{"nothing to do", func(cs []Candidate, p *Pass) {}, "", nil, "nothing to do among 3 candidates", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool.Spec.Disruption.Budgets = nil
			var cs []Candidate
			for i := 0; i < 3; i++ {
				node, nc := testClaim(i, pool)
				cs = append(cs, Candidate{Node: node, Claim: nc, Pool: pool, Price: 0.1 + 0.01*float64(i), Pods: 1})
			}
			p := &Pass{Now: t0, Pools: map[string]PoolNodes{pool.Name: {Nodes: 3}},
				Simulate: func([]string) solver.RemovalResult { return solver.RemovalResult{Reason: "no room"} }}
			c.setup(cs, p)
			if c.budgetNo {
				pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "0"}}
			}
			p.Candidates = cs
			d := Decide(p)
			if d.Method != c.method || !reflect.DeepEqual(d.Nodes, c.nodes) || d.Why != c.why || d.Replace != c.replace {
				t.Fatalf("decision %+v, want method %q nodes %v why %q replace %v", d, c.method, c.nodes, c.why, c.replace)
			}
			if d.Eligible != 3 || len(d.Candidates) != 3 || d.Candidates[0] != "ip-10-0-0-10.ec2.internal" {
				t.Errorf("eligible %d, candidates %v", d.Eligible, d.Candidates)
			}
			if c.method != "" && d.Reason == "" {
				t.Errorf("no reason on %+v", d)
			}
		})
	}
}

func TestBudgetErrorAllowsNothingAndIsReported(t *testing.T) {
	pool := testPool("general-purpose")
	bad := "not a cron"
	pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "1", Schedule: &bad, Duration: &metav1.Duration{Duration: time.Hour}}}
	node, nc := testClaim(0, pool)
	var reported []string
	p := &Pass{Now: t0, Candidates: []Candidate{{Node: node, Claim: nc, Pool: pool}},
		Pools:    map[string]PoolNodes{pool.Name: {Nodes: 1}},
		Simulate: func([]string) solver.RemovalResult { return solver.RemovalResult{Possible: true} },
		OnBudgetError: func(pool string, err error) {
			reported = append(reported, pool+": "+err.Error())
		}}
	if d := Decide(p); d.Method != "" {
		t.Fatalf("decided %+v under a broken budget", d)
	}
	if len(reported) == 0 || !strings.HasPrefix(reported[0], "general-purpose: budgets[0]: schedule") {
		t.Errorf("reported %v", reported)
	}
}

func TestRecheckAndResimulated(t *testing.T) {
	pool := testPool("general-purpose")
	n0, c0 := testClaim(0, pool)
	n1, c1 := testClaim(1, pool)
	cands := []Candidate{{Node: n0, Claim: c0, Pool: pool}, {Node: n1, Claim: c1, Pool: pool, Pods: 2}}
	empty := saga.DisruptionDecision{Method: saga.MethodEmptiness, Nodes: []string{n0.Name}}
	cases := []struct {
		name  string
		d     saga.DisruptionDecision
		want  saga.Validation
		final bool
	}{
		{"empty node still empty", empty, saga.Validation{Valid: true}, true},
		{"empty node now holds pods", saga.DisruptionDecision{Method: saga.MethodEmptiness, Nodes: []string{n1.Name}},
			saga.Validation{Why: "node " + n1.Name + " is no longer empty"}, true},
		{"node no longer a candidate", saga.DisruptionDecision{Method: saga.MethodSingleNode, Nodes: []string{"gone"}},
			saga.Validation{Why: "node gone is no longer a candidate (do-not-disrupt, PDB, nomination or gone)"}, true},
		{"consolidation needs a new simulation", saga.DisruptionDecision{Method: saga.MethodMultiNode, Nodes: []string{n0.Name, n1.Name}},
			saga.Validation{}, false},
	}
	for _, c := range cases {
		if v, final := Recheck(c.d, cands); v != c.want || final != c.final {
			t.Errorf("%s: %+v final %v, want %+v final %v", c.name, v, final, c.want, c.final)
		}
	}
}
