package solver

import (
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Issue 21: Solve with a 100 ms budget returns a valid plan within 200 ms
// on 10,000 mixed pods. The one wall-clock assertion of the package, as
// the issue asks; the machine may be shared, so the best of three tries
// counts, and a try whose wall time is long while the process got at most
// 200 ms of CPU (the machine was overloaded, not the solver late) passes
// with a note.
func TestSolveBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 pods")
	}
	in := mixedInput(t, 10000, 1, false)
	in.Budget = 100 * time.Millisecond
	const limit = 200 * time.Millisecond
	best, bestCPU := time.Duration(1<<62), time.Duration(1<<62)
	var plan Plan
	for try := 0; try < 3 && best > limit; try++ {
		start, cpu0 := time.Now(), processCPU()
		plan = Solve(in)
		best, bestCPU = min(best, time.Since(start)), min(bestCPU, processCPU()-cpu0)
	}
	t.Logf("budget %v: %v wall (overrun %v), %v CPU; %.2f $/hour on %d nodes", in.Budget, best, best-in.Budget, bestCPU, plan.Price(), len(plan.NewNodeClaims))
	switch {
	case best <= limit:
	case bestCPU <= limit:
		t.Logf("wall time over %v while the process had %v of CPU: the machine is overloaded", limit, bestCPU)
	default:
		t.Errorf("Solve took %v (%v CPU) with a %v budget, want at most %v", best, bestCPU, in.Budget, limit)
	}
	checkMixedPlan(t, in, &plan)
}

// The mixed 2,000-pod plan (whole search) costs no more than the figure
// measured for issue 21 (with 1% slack) and breaks no constraint.
func TestMixedPlanCost(t *testing.T) {
	in := mixedInput(t, 2000, 1, false)
	in.Budget = -1
	plan := Solve(in)
	checkMixedPlan(t, in, &plan)
	const pinned = mixedPinned2k
	t.Logf("mixed 2,000: %.2f $/hour on %d nodes (pinned %.2f)", plan.Price(), len(plan.NewNodeClaims), pinned)
	if plan.Price() > pinned*1.01 {
		t.Errorf("mixed 2,000 plan %.2f $/hour, want at most %.2f", plan.Price(), pinned*1.01)
	}
}

// mixedPinned2k is the USD/hour of the mixed 2,000-pod plan (seed 1, spot).
const mixedPinned2k = 195.67

// checkMixedPlan is checkPlanInvariants plus the mixed input's own rules:
// every pod placed, memory pods on the memory pool, GPU pods on the gpu
// pool with enough GPUs, arm64 pods on arm64 types only, nothing else on
// a tainted pool.
func checkMixedPlan(t *testing.T, in Input, plan *Plan) {
	t.Helper()
	checkPlanInvariants(t, in, plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("%d unschedulable, first %+v", len(plan.Unschedulable), plan.Unschedulable[0])
	}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		for _, key := range nc.Pods {
			kind := key[:strings.IndexByte(key, '/')]
			want := map[string]string{"memory": "memory", "gpu": "gpu"}[kind]
			if want == "" {
				want = "general"
			}
			if nc.NodePool != want {
				t.Fatalf("pod %s on pool %s, want %s", key, nc.NodePool, want)
			}
			if kind != "arm" {
				continue
			}
			for _, o := range nc.InstanceTypes {
				if o.Type.Labels()[apiv1.LabelArch] != "arm64" {
					t.Fatalf("arm64 pod %s on a claim offering %s", key, o.Type.Name)
				}
			}
		}
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Under a time budget the LP starts only after the first pass, and not
// at all once that pass has spent the budget (it would be dropped).
func TestSpentBudgetStartsNoLP(t *testing.T) {
	in := mixedInputOf(t, 300, mixedVariant{seed: 1, wide: true})
	p := prepare(in)
	p.deadline = time.Now()
	sr := &search{p: p, strategies: DefaultStrategies(), lpGuided: true}
	if best := sr.run(); best == nil || len(best.unsched) != 0 {
		t.Fatalf("the first pass placed nothing or left pods unplaced")
	}
	if sr.lps != nil {
		t.Errorf("the LP started with the budget spent")
	}
	p.deadline = time.Time{}
	sr = &search{p: p, strategies: DefaultStrategies(), lpGuided: true}
	sr.run()
	if sr.lps == nil {
		t.Errorf("the LP did not start without a budget")
	}
}
