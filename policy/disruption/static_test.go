package disruption

import (
	"testing"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/solver"
)

// A static NodePool's nodes are neither emptied nor consolidated, whatever
// its consolidateAfter says, while the same nodes of a dynamic pool are.
func TestStaticPoolIsNeverConsolidated(t *testing.T) {
	for _, static := range []bool{false, true} {
		pool := testPool("fixed")
		if static {
			n := int64(3)
			pool.Spec.Replicas = &n
		}
		var cs []Candidate
		for i := 0; i < 3; i++ {
			node, nc := testClaim(i, pool)
			pods := 1
			if i == 0 {
				pods = 0 // empty
			}
			cs = append(cs, Candidate{Node: node, Claim: nc, Pool: pool, Price: 0.1, Pods: pods, RescheduleDisruptionCost: 1 + float64(pods)})
		}
		p := &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{pool.Name: {Nodes: 3}},
			Simulate: func([]string) solver.RemovalResult {
				return solver.RemovalResult{Possible: true, SavingUSDPerHour: 0.1}
			}}
		d := Decide(p)
		el := EligibleByReason(p)
		if static {
			if d.Method != "" || el[saga.ReasonEmpty] != 0 || el[saga.ReasonUnderused] != 0 {
				t.Errorf("static pool: decided %q %v, eligible %v; want nothing", d.Method, d.Nodes, el)
			}
			if _, ok := ConsolidatableAt(cs[0].Claim, pool); ok {
				t.Error("a static pool's NodeClaim becomes consolidatable")
			}
			continue
		}
		if d.Method != saga.MethodEmptiness || len(d.Nodes) != 1 || d.Nodes[0] != cs[0].Node.Name {
			t.Errorf("dynamic pool: decided %q %v, want emptiness of %s", d.Method, d.Nodes, cs[0].Node.Name)
		}
		if el[saga.ReasonEmpty] != 1 || el[saga.ReasonUnderused] != 2 {
			t.Errorf("dynamic pool: eligible %v", el)
		}
	}
}
