package solver

import (
	"slices"
	"testing"
	"time"
)

// The default search (a zero Budget, a fixed schedule of passes) plans the
// hard mixed inputs of 10,000 pods within 0.5% of the whole search, and
// the lower bound stays at or below the whole search's cost. Three of
// mixedHardVariants, one per pass that won there: the LP's seeded passes
// (seed 1), a strict plain pass with a size cap (seed 3) and the split
// pools with their limited arm64 pool.
func TestDefaultSearchNearWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 pods, the whole search")
	}
	// Under a heavily loaded machine the 20 s backstop can cut the
	// schedule short: this test is about the schedule's plans.
	defer func(d time.Duration) { scheduleBackstop = d }(scheduleBackstop)
	scheduleBackstop = time.Hour
	for _, v := range []mixedVariant{
		{seed: 1, wide: true, spot: "market"},
		{seed: 3, wide: true, spot: "market"},
		{seed: 3, pools: "split", spot: "market"},
	} {
		in := mixedInputOf(t, 10000, v)
		def := Solve(in)
		checkPlanInvariants(t, in, &def)
		full := in
		full.Budget = -1
		whole := Solve(full)
		lb := LowerBound(in)
		t.Logf("%v: default %.2f, whole %.2f (x%.4f), bound %.2f (whole x%.4f)", v, def.Price(), whole.Price(), def.Price()/whole.Price(), lb, whole.Price()/lb)
		if len(def.Unschedulable) > len(whole.Unschedulable) {
			t.Errorf("%v: default leaves %d pods unschedulable, the whole search %d", v, len(def.Unschedulable), len(whole.Unschedulable))
		}
		if def.Price() > whole.Price()*1.005 {
			t.Errorf("%v: default plan %.2f usd/h, more than 0.5%% above the whole search's %.2f", v, def.Price(), whole.Price())
		}
		if lb <= 0 || lb > whole.Price() {
			t.Errorf("%v: lower bound %.2f, want in (0, %.2f]", v, lb, whole.Price())
		}
	}
}

// The default search counts passes, not time: the same input gives the
// same plan, pod for pod.
func TestDefaultSearchDeterministic(t *testing.T) {
	in := mixedInputOf(t, 2000, mixedVariant{seed: 1, wide: true, spot: "market"})
	a, b := Solve(in), Solve(in)
	if a.Price() != b.Price() || len(a.NewNodeClaims) != len(b.NewNodeClaims) {
		t.Fatalf("two solves: %.4f usd/h on %d claims, then %.4f on %d", a.Price(), len(a.NewNodeClaims), b.Price(), len(b.NewNodeClaims))
	}
	for i := range a.NewNodeClaims {
		if !slices.Equal(a.NewNodeClaims[i].Pods, b.NewNodeClaims[i].Pods) {
			t.Fatalf("claim %d holds %v, then %v", i, a.NewNodeClaims[i].Pods, b.NewNodeClaims[i].Pods)
		}
	}
}
