package disruption

import (
	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
)

// EligibleByReason counts the pass's candidates each method may consider
// before budgets, as Karpenter's karpenter_voluntary_disruption_eligible_nodes
// does per reason: drifted (Drift says why), empty (Empty and
// consolidatable), underutilized (not of a WhenEmpty pool, not empty,
// consolidatable). Every reason is present, 0 when none.
func EligibleByReason(p *Pass) map[string]int {
	out := map[string]int{saga.ReasonDrifted: 0, saga.ReasonEmpty: 0, saga.ReasonUnderused: 0}
	for _, c := range p.Candidates {
		if _, why := Drift(c.Claim, c.Node, c.Pool, c.Class, c.Offered, nodeclass.LaunchedFrom(c.Claim)); why != "" {
			out[saga.ReasonDrifted]++
		}
		if !IsConsolidatable(c.Claim, c.Pool, p.Now) {
			continue
		}
		switch {
		case c.Empty():
			out[saga.ReasonEmpty]++
		case c.Pool.Spec.Disruption.ConsolidationPolicy != apiv1.ConsolidationPolicyWhenEmpty:
			out[saga.ReasonUnderused]++
		}
	}
	return out
}
