package solver

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// MIN_VALUES_POLICY=BestEffort (Karpenter's): the pod that pins one
// instance family, which Strict refuses against minValues 3
// (TestSolveMinValues), is planned on a claim whose family requirement's
// minValues is lowered to the 1 family its types have, marked relaxed (as
// in Karpenter, pods that any family holds may share that claim); a claim
// without it still meets minValues 3 and is not relaxed.
func TestSolveMinValuesBestEffortRelaxes(t *testing.T) {
	in := minValuesInput(t)
	in.MinValuesBestEffort = true
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable under BestEffort: %v", plan.Unschedulable)
	}
	familyMinValues := func(nc *NewNodeClaim) int {
		for _, r := range nc.Requirements {
			if r.Key == apiv1.LabelInstanceFamily && r.MinValues != nil {
				return *r.MinValues
			}
		}
		return 0
	}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		fams := map[string]bool{}
		for _, o := range nc.InstanceTypes {
			fams[o.Type.Family] = true
		}
		pinned := false
		for _, p := range nc.Pods {
			pinned = pinned || p == "default/one-family"
		}
		switch {
		case pinned && (!nc.MinValuesRelaxed || familyMinValues(nc) != 1 || len(fams) != 1):
			t.Errorf("m6i pod's claim: relaxed %v, family minValues %d, families %v; want relaxed to 1 over m6i", nc.MinValuesRelaxed, familyMinValues(nc), fams)
		case !pinned && (nc.MinValuesRelaxed || familyMinValues(nc) != 3 || len(fams) < 3):
			t.Errorf("claim %v: relaxed %v, family minValues %d, families %v; want minValues 3 met", nc.Pods, nc.MinValuesRelaxed, familyMinValues(nc), fams)
		}
	}
	if claimOf(&plan, "default/one-family") == nil {
		t.Error("the m6i pod has no claim")
	}
	// Where minValues can be met, BestEffort meets it.
	in.Pods = in.Pods[:3] // without the m6i pod
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	for i := range plan.NewNodeClaims {
		if nc := &plan.NewNodeClaims[i]; nc.MinValuesRelaxed || familyMinValues(nc) != 3 {
			t.Errorf("claim %v without the m6i pod: relaxed %v, family minValues %d; want 3, not relaxed", nc.Pods, nc.MinValuesRelaxed, familyMinValues(nc))
		}
	}
	if len(plan.NewNodeClaims) == 0 {
		t.Error("no claims for the pods any family holds")
	}
}
