package solver

import (
	"math"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// TestCostRejectsAgreesWithTheScan: the early price check (costRejects)
// refuses exactly the additions the full scan of the claim's types and
// the cost rules would (refusesNarrowed), on mixed batches with zone
// spreads, capacity-type affinity, accelerator pods and limited pools.
func TestCostRejectsAgreesWithTheScan(t *testing.T) {
	defer func() { verifyCostRejects, costRejectsWrong, costRejected = false, 0, 0 }()
	verifyCostRejects = true
	for _, v := range []mixedVariant{
		{seed: 1, wide: true, spot: "market"},
		{seed: 8, wide: true, pools: "split", spot: "market"},
		{seed: 3},
	} {
		costRejectsWrong, costRejected = 0, 0
		in := mixedInputOf(t, 1500, v)
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if costRejected == 0 {
			t.Errorf("%v: no addition rejected early; the check tested nothing", v)
		}
		if costRejectsWrong != 0 {
			t.Errorf("%v: the early check disagreed with the scan %d times (%d rejections)", v, costRejectsWrong, costRejected)
		}
		t.Logf("%v: %d early rejections, all agreeing with the scan", v, costRejected)
	}
}

// A pod whose zone narrows the claim's cheapest type to a dearer offering
// joins when another type of the claim stays cheaper than that: type "a"
// costs 0.10 as spot in zone b and 0.40 on demand in zone a, type "b" 0.20
// in zone a. The first pod's claim starts at a's 0.10; the second pod
// needs zone a, where b at 0.20 is the new cheapest, within the loose
// tolerance (twice the price per cpu), so both pods share one b node. An
// early check that stopped at the first surviving type (a at 0.40) would
// refuse and buy a second node.
func TestCostRejectsFindsTheCheapestNarrowedType(t *testing.T) {
	in := Input{
		NodePools:  []NodePool{{Name: "p", NodesLimit: -1, InstanceTypes: []InstanceTypeOption{lbType("a", 1000, 1000, 110, 0.40, 0.10), lbType("b", 1000, 1000, 110, 0.20, 0)}}},
		Strategies: []Strategy{{UpsizeTolerance: 1}},
	}
	// lbType offers on demand in testZones[0] and spot in testZones[1].
	first, second := pod("first", 400, 100), pod("second", 300, 100)
	second.NodeSelector = map[string]string{apiv1.LabelZone: testZones[0]}
	in.Pods = []Pod{first, second}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 1 || math.Abs(plan.Price()-0.20) > 1e-9 {
		for _, nc := range plan.NewNodeClaims {
			t.Logf("claim %v: %s", nc.Pods, nc.InstanceTypes[0].Type.Name)
		}
		t.Fatalf("%d NodeClaims at %.2f USD/h, want one b node at 0.20", len(plan.NewNodeClaims), plan.Price())
	}
}
