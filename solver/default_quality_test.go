package solver

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// The default search (a zero Budget, a fixed schedule of passes) plans
// the hard mixed inputs of 10,000 pods at the whole search's cost (within
// 0.1%), and the lower bound stays at or below it (within 5% of it with
// the default pools: the split pools' bound is looser). One input per pass of the
// schedule that alone found the whole search's plan there: the seeded
// pass with a loose tolerance under a 32-vCPU cap (seed 4), the seeded
// greedy from the LP's second warm start (seed 9, split pools), the mixed
// plain pass (seed 8) and the plain strict pass (seed 4, split pools).
func TestDefaultSearchNearWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 pods, the whole search")
	}
	// Under a heavily loaded machine the 20 s backstop can cut the
	// schedule short: this test is about the schedule's plans.
	defer func(d time.Duration) { scheduleBackstop = d }(scheduleBackstop)
	scheduleBackstop = time.Hour
	for _, v := range []mixedVariant{
		{seed: 4, wide: true, spot: "market"},
		{seed: 9, wide: true, pools: "split"},
		{seed: 8, wide: true, pools: "split", spot: "market"},
		{seed: 4, wide: true, pools: "split", spot: "market"},
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
		if def.Price() > whole.Price()*1.001 {
			t.Errorf("%v: default plan %.4f usd/h, more than 0.1%% above the whole search's %.4f", v, def.Price(), whole.Price())
		}
		if lb <= 0 || lb > whole.Price() {
			t.Errorf("%v: lower bound %.2f, want in (0, %.2f]", v, lb, whole.Price())
		}
		if v.pools == "" && def.Price() > 1.05*lb {
			t.Errorf("%v: default plan %.2f usd/h, more than 5%% above the lower bound %.2f", v, def.Price(), lb)
		}
	}
}

// The default search counts passes, not time: the same input gives the
// same plan, pod for pod, however the LP's goroutine is scheduled (here
// beside the passes, then interleaved with them on one thread).
func TestDefaultSearchDeterministic(t *testing.T) {
	in := mixedInputOf(t, 2000, mixedVariant{seed: 1, wide: true, spot: "market"})
	a := Solve(in)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b := Solve(in)
	if a.Price() != b.Price() || len(a.NewNodeClaims) != len(b.NewNodeClaims) {
		t.Fatalf("two solves: %.4f usd/h on %d claims, then %.4f on %d", a.Price(), len(a.NewNodeClaims), b.Price(), len(b.NewNodeClaims))
	}
	for i := range a.NewNodeClaims {
		if !slices.Equal(a.NewNodeClaims[i].Pods, b.NewNodeClaims[i].Pods) {
			t.Fatalf("claim %d holds %v, then %v", i, a.NewNodeClaims[i].Pods, b.NewNodeClaims[i].Pods)
		}
	}
}

// A panic in the LP's goroutine reaches Solve's caller, as one in a pass
// does (an activity reports it), instead of ending the process.
func TestLPPanicReachesTheCaller(t *testing.T) {
	defer func(f func()) { beforeLP = f }(beforeLP)
	beforeLP = func() { panic("lp broke") }
	in := mixedInputOf(t, 300, mixedVariant{seed: 1, wide: true})
	defer func() {
		if r := recover(); r != "lp broke" {
			t.Fatalf("Solve recovered %v, want the LP's panic", r)
		}
	}()
	Solve(in)
	t.Fatal("Solve returned despite the LP's panic")
}
