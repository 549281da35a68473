package solver

import (
	"strconv"
	"testing"
)

// usdPool is an on-demand pool of m6i.xlarge only (0.192 USD/hour), with
// the given USD/hour limit annotation.
func usdPool(t *testing.T, name string, weight int, limit string) NodePool {
	return poolYAML(t, `
metadata:
  name: `+name+`
  annotations: {joinery.sh/limit-usd-per-hour: "`+limit+`"}
spec:
  weight: `+strconv.Itoa(weight)+`
  template:
    spec:
      `+nodeClassRef+`
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`)
}

func TestCostLimitCutsThePlanWithTheReason(t *testing.T) {
	p := usdPool(t, "capped", 10, "0.5")
	if !p.HasCostLimit || p.CostLimit != 0.5 {
		t.Fatalf("limit not read: %v %v", p.HasCostLimit, p.CostLimit)
	}
	// Eight 3-cpu pods want eight m6i.xlarge (1.536 USD/hour); 0.5 holds two.
	in := Input{Pods: pods("p", 8, 3000, 1024), NodePools: []NodePool{p}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 2 || len(plan.Unschedulable) != 6 {
		t.Fatalf("claims %d, unschedulable %d; want 2 and 6", len(plan.NewNodeClaims), len(plan.Unschedulable))
	}
	if got := plan.Price(); got != 0.384 {
		t.Errorf("plan price %v, want 0.384", got)
	}
	const want = "NodePool capped limits reached (joinery.sh/limit-usd-per-hour: 0.5 USD/hour)"
	for _, u := range plan.Unschedulable {
		if u.Reason != want {
			t.Errorf("%s: reason %q, want %q", u.Pod, u.Reason, want)
		}
	}
	// Existing nodes' cost counts: 0.2 in use leaves room for one node.
	p.CostUsage = 0.2
	plan = Solve(Input{Pods: pods("p", 8, 3000, 1024), NodePools: []NodePool{p}})
	if len(plan.NewNodeClaims) != 1 {
		t.Errorf("with 0.2 in use: %d claims, want 1", len(plan.NewNodeClaims))
	}
	// Usage equal to the limit is allowed: 0.384 exactly holds two.
	p = usdPool(t, "capped", 10, "0.384")
	if plan = Solve(Input{Pods: pods("p", 3, 3000, 1024), NodePools: []NodePool{p}}); len(plan.NewNodeClaims) != 2 {
		t.Errorf("limit 0.384: %d claims, want 2", len(plan.NewNodeClaims))
	}
}

func TestCostLimitFallsBackToTheNextPool(t *testing.T) {
	primary := usdPool(t, "primary", 100, "0.4")
	fallback := simplePool(t, "fallback", 10, "c6i", "")
	in := Input{Pods: pods("p", 5, 3000, 1024), NodePools: []NodePool{fallback, primary}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	perPool := map[string]int{}
	for _, nc := range plan.NewNodeClaims {
		perPool[nc.NodePool] += len(nc.Pods)
	}
	if perPool["primary"] != 2 || perPool["fallback"] != 3 || len(plan.Unschedulable) != 0 {
		t.Errorf("pods per pool %v, unschedulable %v; want primary 2, fallback 3", perPool, plan.Unschedulable)
	}
}

func TestCostLimitKeepsEveryTypeOfAClaimUnderIt(t *testing.T) {
	// A claim counts at the dearest offering it may launch as, so every
	// type it offers the launcher fits the remaining budget.
	open := familiesPool(t, "m6i", "m6i")
	capped := open
	capped.CostLimit, capped.HasCostLimit, capped.CostUsage = 1.0, true, 0.6
	dearest := func(p NodePool) float64 {
		plan := Solve(Input{Pods: []Pod{pod("one", 1000, 1024)}, NodePools: []NodePool{p}})
		if len(plan.NewNodeClaims) != 1 {
			t.Fatalf("claims %d, want 1", len(plan.NewNodeClaims))
		}
		worst := 0.0
		for _, it := range plan.NewNodeClaims[0].InstanceTypes {
			for _, o := range it.Offerings {
				worst = max(worst, o.Price)
			}
		}
		return worst
	}
	if d := dearest(open); d <= 0.4 {
		t.Fatalf("without a limit the dearest offering is %v: the test needs one above 0.4", d)
	}
	if d := dearest(capped); d > 0.4 {
		t.Errorf("with 0.4 left the claim offers a type at %v", d)
	}
}
