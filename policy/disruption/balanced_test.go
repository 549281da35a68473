package disruption

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

// onDemand is the embedded catalog's on-demand price (USD/hour, us-east-1).
func onDemand(t *testing.T, name string) float64 {
	t.Helper()
	it, ok := catalog.MustDefault().Get(name)
	if !ok {
		t.Fatalf("%s not in the catalog", name)
	}
	return it.OnDemandPrice
}

func balancedPool(name string) *apiv1.NodePool {
	p := testPool(name)
	p.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyBalanced
	return p
}

// The pool of Karpenter's RFC examples, with real prices: eight
// m7i.xlarge and two m7i.2xlarge running 80 pods of default cost. Its
// disruption total counts each node's base cost too: 80 + 10 = 90.
func rfcPool(t *testing.T) PoolTotals {
	return PoolTotals{USDPerHour: 8*onDemand(t, "m7i.xlarge") + 2*onDemand(t, "m7i.2xlarge"), DisruptionCost: 90}
}

func TestBalancedScoresWithRealPrices(t *testing.T) {
	xl, xxl, large, m6i := onDemand(t, "m7i.xlarge"), onDemand(t, "m7i.2xlarge"), onDemand(t, "m7i.large"), onDemand(t, "m6i.xlarge")
	pool := balancedPool("general-purpose")
	totals := map[string]PoolTotals{pool.Name: rfcPool(t)}
	cand := func(price float64, pods int, cost float64) Candidate {
		node, nc := testClaim(0, pool)
		return Candidate{Node: node, Claim: nc, Pool: pool, Price: price, Pods: pods, RescheduleDisruptionCost: cost}
	}
	cases := []struct {
		name   string
		c      Candidate
		saving float64
		score  float64
		ok     bool
	}{
		// 10 pods on an m7i.xlarge (0.2016) moved to an m6i.xlarge (0.1920)
		// to save 0.96 cents an hour: 0.40% of the pool's cost for 12.2% of
		// its disruption.
		{"a full node replaced for cents", cand(xl, 10, 11), xl - m6i, 0.0325, false},
		// One pod on an m7i.2xlarge (0.4032) fits an m7i.large (0.1008):
		// 12.5% of the cost for 2.2% of the disruption.
		{"an empty-ish expensive node replaced", cand(xxl, 1, 2), xxl - large, 5.625, true},
		// 4 pods deleted outright (spare room elsewhere): 8.3% for 5.6%.
		{"spare capacity delete", cand(xl, 4, 5), xl, 1.5, true},
		// 8 pods moved to a node half the price: 4.2% for 10%.
		{"a marginal replace", cand(xl, 8, 9), xl - large, 0.4167, false},
		// An empty node's delete costs only the node's base.
		{"an empty node deleted", cand(xl, 0, 1), xl, 7.5, true},
		// The same node, its 3 pods each at pod-deletion-cost 2^31-1 (10).
		{"precious pods are not moved for a delete", cand(xl, 3, 31), xl, 0.2419, false},
		{"no saving", cand(xl, 1, 2), 0, 0, false},
	}
	for _, c := range cases {
		ok, why, scores := Approve([]Candidate{c.c}, c.saving, totals)
		if len(scores) != 1 {
			t.Fatalf("%s: %d scores", c.name, len(scores))
		}
		s := scores[0]
		if ok != c.ok || s.Approved() != c.ok || math.Abs(s.Value()-c.score) > 5e-4 {
			t.Errorf("%s: approved %v score %.4f, want %v %.4f (%s)", c.name, ok, s.Value(), c.ok, c.score, s)
		}
		if (why == "") != c.ok {
			t.Errorf("%s: why %q", c.name, why)
		}
	}
	_, why, _ := Approve([]Candidate{cand(xl, 10, 11)}, xl-m6i, totals)
	if want := "NodePool general-purpose: score 0.03 < threshold 0.50 (k: 2, savings 0.4% of 2.4192 USD/hour, disruption 12.2% of 90.00)"; why != want {
		t.Errorf("why = %q, want %q", why, want)
	}
}

// The verdict does not depend on the pool's size: the same move in a pool
// ten times larger scores the same.
func TestBalancedScoreIsScaleInvariant(t *testing.T) {
	xxl, large := onDemand(t, "m7i.2xlarge"), onDemand(t, "m7i.large")
	small := ScoreMove("p", xxl-large, 3, PoolTotals{USDPerHour: 2.4192, DisruptionCost: 90})
	big := ScoreMove("p", xxl-large, 3, PoolTotals{USDPerHour: 24.192, DisruptionCost: 900})
	if math.Abs(small.Value()-big.Value()) > 1e-9 || math.Abs(small.Value()-3.75) > 1e-9 {
		t.Errorf("scores %v and %v, want 3.75 both", small.Value(), big.Value())
	}
}

func TestBalancedOnlyScoresBalancedPoolsAndSplitsTheSaving(t *testing.T) {
	balanced, other := balancedPool("balanced"), testPool("general-purpose")
	n0, c0 := testClaim(0, balanced)
	n1, c1 := testClaim(1, other)
	a := Candidate{Node: n0, Claim: c0, Pool: balanced, Price: 0.3, Pods: 2, RescheduleDisruptionCost: 3}
	b := Candidate{Node: n1, Claim: c1, Pool: other, Price: 0.1, Pods: 2, RescheduleDisruptionCost: 3}
	totals := map[string]PoolTotals{"balanced": {USDPerHour: 1, DisruptionCost: 30}}
	// Not Balanced: approved, nothing scored.
	if ok, why, scores := Approve([]Candidate{b}, 0.0001, nil); !ok || why != "" || len(scores) != 0 {
		t.Errorf("WhenEmptyOrUnderutilized: %v %q %v", ok, why, scores)
	}
	// Across pools the net saving 0.2 is split by price: 3/4 to balanced,
	// (0.15/1)/(3/30) = 1.5.
	ok, _, scores := Approve([]Candidate{a, b}, 0.2, totals)
	if !ok || len(scores) != 1 || math.Abs(scores[0].SavingUSDPerHour-0.15) > 1e-12 || scores[0].DisruptionCost != 3 ||
		math.Abs(scores[0].Value()-1.5) > 1e-9 {
		t.Errorf("cross-pool: %v %+v", ok, scores)
	}
	// A Balanced pool without totals approves nothing.
	if ok, why, _ := Approve([]Candidate{a}, 0.2, nil); ok || !strings.Contains(why, "unknown") {
		t.Errorf("no totals: %v %q", ok, why)
	}
	// CanPassThreshold: a delete of a scores (0.3/1)/(3/30) = 3; one with
	// 20 pods' worth (21/30) only 0.43.
	heavy := a
	heavy.RescheduleDisruptionCost = 21
	if !CanPassThreshold(a, totals) || CanPassThreshold(heavy, totals) || !CanPassThreshold(b, totals) || !CanPassThreshold(heavy, nil) {
		t.Errorf("CanPassThreshold: %v %v %v %v", CanPassThreshold(a, totals), CanPassThreshold(heavy, totals), CanPassThreshold(b, totals), CanPassThreshold(heavy, nil))
	}
}

// Through Decide: a Balanced pool keeps its full node that a
// WhenEmptyOrUnderutilized pool would replace for cents, and replaces an
// oversized near-empty one.
func TestDecideBalancedRejectsCentsAndTakesTheOversizedNode(t *testing.T) {
	xl, xxl, large, m6i := onDemand(t, "m7i.xlarge"), onDemand(t, "m7i.2xlarge"), onDemand(t, "m7i.large"), onDemand(t, "m6i.xlarge")
	run := func(policy string, oversized bool) (saga.DisruptionDecision, []Score) {
		pool := testPool("general-purpose")
		pool.Spec.Disruption.ConsolidationPolicy = policy
		var cs []Candidate
		// Node 0: 10 pods on an m7i.xlarge that fit an m6i.xlarge.
		n0, c0 := testClaim(0, pool)
		cs = append(cs, Candidate{Node: n0, Claim: c0, Pool: pool, Price: xl, Pods: 10, RescheduleDisruptionCost: 11})
		if oversized {
			n1, c1 := testClaim(1, pool)
			cs = append(cs, Candidate{Node: n1, Claim: c1, Pool: pool, Price: xxl, Pods: 1, RescheduleDisruptionCost: 2})
		}
		var scores []Score
		p := &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{pool.Name: {Nodes: 10}},
			PoolTotals: map[string]PoolTotals{pool.Name: rfcPool(t)},
			OnScore:    func(s Score) { scores = append(scores, s) },
			Simulate: func(nodes []string) solver.RemovalResult {
				if len(nodes) != 1 {
					return solver.RemovalResult{Reason: "no room"}
				}
				if nodes[0] == n0.Name {
					return solver.RemovalResult{Possible: true, SavingUSDPerHour: xl - m6i}
				}
				return solver.RemovalResult{Possible: true, SavingUSDPerHour: xxl - large}
			}}
		pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
		return Decide(p), scores
	}
	if d, scores := run(apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized, false); d.Method != saga.MethodSingleNode || len(scores) != 0 {
		t.Errorf("WhenEmptyOrUnderutilized: %+v, scores %v", d, scores)
	}
	d, scores := run(apiv1.ConsolidationPolicyBalanced, false)
	if d.Method != "" || len(scores) != 1 || scores[0].Approved() {
		t.Errorf("Balanced, full node: %+v, scores %v", d, scores)
	}
	// The oversized node comes first (SavingsRatio 0.2016 against 0.0183)
	// and is approved at 5.6 (every score the search made is of it).
	d, scores = run(apiv1.ConsolidationPolicyBalanced, true)
	if d.Method != saga.MethodSingleNode || !reflect.DeepEqual(d.Nodes, []string{"ip-10-0-0-11.ec2.internal"}) || len(scores) == 0 {
		t.Errorf("Balanced, oversized node: %+v, scores %v", d, scores)
	}
	for _, s := range scores {
		if !s.Approved() || math.Abs(s.Value()-5.625) > 1e-3 {
			t.Errorf("Balanced, oversized node: score %s", s)
		}
	}
}

// Multi-node under Balanced: the prefix search stops at the longest
// prefix the pool approves, not the longest that fits.
func TestMultiNodeBalancedKeepsTheApprovedPrefix(t *testing.T) {
	pool := balancedPool("general-purpose")
	pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
	var cs []Candidate
	// Four nodes at 0.2 USD/hour: two with one pod, two with nine.
	for i, pods := range []int{1, 1, 9, 9} {
		n, c := testClaim(i, pool)
		cs = append(cs, Candidate{Node: n, Claim: c, Pool: pool, Price: 0.2, Pods: pods, RescheduleDisruptionCost: float64(1 + pods)})
	}
	// Pool: 10 nodes at 0.2 (2 USD/hour), disruption 50. Every prefix fits
	// with one replacement at 0.15 (saving 0.2k - 0.15). Prefix 2: (0.25/2)/(4/50)
	// = 1.56; prefix 3: (0.45/2)/(14/50) = 0.80; prefix 4: (0.65/2)/(24/50) = 0.68.
	// All pass: the search takes all four.
	p := &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{pool.Name: {Nodes: 10}},
		PoolTotals: map[string]PoolTotals{pool.Name: {USDPerHour: 2, DisruptionCost: 50}},
		Simulate: func(nodes []string) solver.RemovalResult {
			return solver.RemovalResult{Possible: true, SavingUSDPerHour: 0.2*float64(len(nodes)) - 0.15}
		}}
	if d := Decide(p); d.Method != saga.MethodMultiNode || len(d.Nodes) != 4 {
		t.Fatalf("all approved: %+v", d)
	}
	// With a heavier pool share of disruption (total 30), prefix 3 scores
	// (0.45/2)/(14/30) = 0.48 and prefix 4 (0.65/2)/(24/30) = 0.41: only
	// the two light nodes go.
	p.PoolTotals[pool.Name] = PoolTotals{USDPerHour: 2, DisruptionCost: 30}
	d := Decide(p)
	if d.Method != saga.MethodMultiNode || !reflect.DeepEqual(d.Nodes, []string{"ip-10-0-0-10.ec2.internal", "ip-10-0-0-11.ec2.internal"}) {
		t.Fatalf("heavy pool: %+v", d)
	}
	if want := fmt.Sprintf("saving %.4f USD/hour", 0.25); !strings.Contains(d.Why, want) {
		t.Errorf("why %q, want %q", d.Why, want)
	}
}

// WhenEmpty: emptiness only. Its nodes with pods are never consolidated,
// even when a cheaper home exists; an empty node of it is deleted.
func TestWhenEmptyExcludesUnderutilizedMoves(t *testing.T) {
	for _, policy := range []string{apiv1.ConsolidationPolicyWhenEmpty, apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized} {
		pool := testPool("general-purpose")
		pool.Spec.Disruption.ConsolidationPolicy = policy
		pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
		var cs []Candidate
		for i := 0; i < 3; i++ {
			n, c := testClaim(i, pool)
			cs = append(cs, Candidate{Node: n, Claim: c, Pool: pool, Price: 0.2, Pods: 2})
		}
		fits := func(nodes []string) solver.RemovalResult {
			return solver.RemovalResult{Possible: true, SavingUSDPerHour: 0.2 * float64(len(nodes))}
		}
		p := &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{pool.Name: {Nodes: 3}}, Simulate: fits}
		d := Decide(p)
		if policy == apiv1.ConsolidationPolicyWhenEmpty {
			if d.Method != "" || len(Consolidatable(p, true)) != 0 || len(Consolidatable(p, false)) != 0 {
				t.Errorf("WhenEmpty consolidated: %+v", d)
			}
		} else if d.Method != saga.MethodMultiNode {
			t.Errorf("WhenEmptyOrUnderutilized: %+v", d)
		}
		// An empty node: emptiness under either policy.
		cs[1].Pods = 0
		if d := Decide(p); d.Method != saga.MethodEmptiness || !reflect.DeepEqual(d.Nodes, []string{cs[1].Node.Name}) {
			t.Errorf("%s, one empty node: %+v", policy, d)
		}
	}
}

// Consolidation tries nodes by SavingsRatio (price per unit of disruption
// cost), highest first: a cheap near-empty node before an expensive full
// one, and a node of precious pods last. Empty nodes are emptiness's.
func TestConsolidatableOrdersBySavingsRatio(t *testing.T) {
	pool := testPool("general-purpose")
	pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
	mk := func(i int, price float64, pods int, cost float64) Candidate {
		n, c := testClaim(i, pool)
		return Candidate{Node: n, Claim: c, Pool: pool, Price: price, Pods: pods, RescheduleDisruptionCost: cost}
	}
	cs := []Candidate{
		mk(0, 0.4032, 10, 11), // 0.0367 per unit
		mk(1, 0.2016, 1, 2),   // 0.1008
		mk(2, 0.2016, 1, 11),  // one pod at cost 10: 0.0183
		mk(3, 0.2016, 0, 1),   // empty
		mk(4, 0.2016, 2, 1),   // two pods free to evict: empty
	}
	p := &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{pool.Name: {Nodes: 5}}}
	want := []string{"ip-10-0-0-11.ec2.internal", "ip-10-0-0-10.ec2.internal", "ip-10-0-0-12.ec2.internal"}
	if got := nodeNames(Consolidatable(p, false)); !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	p.Simulate = func([]string) solver.RemovalResult { return solver.RemovalResult{} }
	if d := Decide(p); d.Method != saga.MethodEmptiness || !reflect.DeepEqual(d.Nodes, []string{"ip-10-0-0-13.ec2.internal", "ip-10-0-0-14.ec2.internal"}) {
		t.Errorf("emptiness: %+v", d)
	}
}
