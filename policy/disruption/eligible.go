package disruption

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/workflows"
)

// EligibleByReason counts the pass's candidates each method may consider
// before budgets, as Karpenter's karpenter_voluntary_disruption_eligible_nodes
// does per reason: drifted (Drift says why), empty (Empty and
// consolidatable), underutilized (not of a WhenEmpty pool, not empty,
// consolidatable). Every reason is present, 0 when none.
func EligibleByReason(p *Pass) map[string]int {
	out := map[string]int{workflows.ReasonDrifted: 0, workflows.ReasonEmpty: 0, workflows.ReasonUnderused: 0}
	for _, c := range p.Candidates {
		if _, why := Drift(c.Claim, c.Node, c.Pool, c.Class, nodeclass.LaunchedFrom(c.Claim)); why != "" {
			out[workflows.ReasonDrifted]++
		}
		if !IsConsolidatable(c.Claim, c.Pool, p.Now) {
			continue
		}
		switch {
		case c.Empty():
			out[workflows.ReasonEmpty]++
		case c.Pool.Spec.Disruption.ConsolidationPolicy != apiv1.ConsolidationPolicyWhenEmpty:
			out[workflows.ReasonUnderused]++
		}
	}
	return out
}
