package solver

import (
	"math"
	"strings"
	"testing"
)

// With one pod shape, no plan beats min over types of price / (pods of that
// shape one node holds); the bound must not exceed it and, with rounded
// shares, must come within 3% of it (the plain weighted-share bound
// stopped at 86%: it counted 1.9 pods where one fits).
func TestLowerBoundSingleShape(t *testing.T) {
	in := inputB(t)
	var web []Pod
	for _, p := range in.Pods {
		if strings.HasPrefix(p.Name, "web-") {
			p.TopologySpread = nil
			web = append(web, p)
		}
	}
	in.Pods = web
	p := prepare(in)
	req := p.pods[0].req
	best := math.Inf(1)
	for _, pl := range p.pools {
		if p.pods[0].sig.forPool(pl).taint != nil {
			continue
		}
		for ti := range pl.types {
			k := int64(math.MaxInt64)
			for r, q := range req {
				if q > 0 {
					k = min(k, pl.usable[ti][r]/q)
				}
			}
			if k > 0 {
				best = min(best, pl.types[ti].cheapest(pl.base[ti])/float64(k))
			}
		}
	}
	exact := best * float64(len(web))
	lb := LowerBound(in)
	t.Logf("%d web pods: best single-type cost %.3f, bound %.3f", len(web), exact, lb)
	if lb > exact*(1+1e-9) || lb < 0.97*exact {
		t.Fatalf("bound %.4f, want within [0.97, 1] x %.4f", lb, exact)
	}
}

// The bound holds for every plan the solver makes, on Input B's pieces
// (600 pods of each class alone) and on every 8th pod of it (all classes).
func TestLowerBoundBelowPlans(t *testing.T) {
	full := inputB(t)
	for _, prefix := range []string{"web-", "batch-", "cache-", "train-", ""} {
		in := full
		in.Pods = nil
		for i, p := range full.Pods {
			if strings.HasPrefix(p.Name, prefix) && (prefix != "" || i%8 == 0) {
				in.Pods = append(in.Pods, p)
			}
		}
		if prefix != "" {
			in.Pods = in.Pods[:min(len(in.Pods), 600)]
		}
		plan := Solve(in)
		lb := LowerBound(in)
		if len(plan.Unschedulable) != 0 || lb <= 0 || lb > plan.Price() {
			t.Errorf("%q: %d unschedulable, plan %.3f, bound %.3f", prefix, len(plan.Unschedulable), plan.Price(), lb)
		}
	}
}

func TestDFFRounding(t *testing.T) {
	for _, c := range []struct {
		k    int
		a, u int64
		want float64
	}{
		{0, 1, 4, 0.25},
		{1, 10, 19, 1},         // 0.53 of a node: only one fits
		{1, 5, 10, 0.5},        // exactly half: two fit
		{1, 4, 10, 0},          // under half: counted by other roundings
		{2, 4, 10, 0.5},        // 0.4: two fit, not 2.5
		{3, 26, 100, 0.333333}, // 0.26: three fit
	} {
		if got := dffRounding(c.k, c.a, c.u); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("dffRounding(%d, %d/%d) = %.6f, want %.6f", c.k, c.a, c.u, got, c.want)
		}
	}
}

// On a mixed batch (every 4th pod of Input B: web, batch, memory-pool
// cache, GPU training) the per-class strategy search beats the best single
// strategy (both without the LP-guided passes, which reach $28.7 either way).
func TestSolvePerClassStrategies(t *testing.T) {
	full := inputB(t)
	in := full
	in.Pods, in.Budget, in.DisableLPGuided = nil, -1, true // the whole search, unguided
	for i, p := range full.Pods {
		if i%4 == 0 {
			in.Pods = append(in.Pods, p)
		}
	}
	plan := Solve(in)
	single := math.Inf(1)
	for _, st := range DefaultStrategies() {
		one := in
		one.Strategies = []Strategy{st}
		sp := Solve(one)
		single = min(single, sp.Price())
	}
	t.Logf("per class %.2f, best single strategy %.2f $/hour", plan.Price(), single)
	if len(plan.Unschedulable) != 0 || plan.Price() >= single {
		t.Fatalf("per-class plan %.3f (%d unschedulable), want below %.3f", plan.Price(), len(plan.Unschedulable), single)
	}
}
