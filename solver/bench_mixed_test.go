package solver

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mixedSizes are the batch sizes of the mixed benchmark input.
var mixedSizes = []int{1000, 2000, 5000, 10000, 20000}

// mixedPools are issue 21's three NodePools over the real catalog: general
// (weight 100; c, m, r categories, generation > 5, amd64 and arm64, spot
// and on-demand), memory (weight 50; r category, on-demand, tainted
// dedicated=memory:NoSchedule) and gpu (weight 10; g4dn, g5, p3,
// on-demand, tainted nvidia.com/gpu:NoSchedule). With onDemand the general
// pool is on-demand only too.
func mixedPools(tb testing.TB, onDemand bool) []NodePool {
	cat := catalog.MustDefault()
	in := func(k string, v ...string) req { return req{Key: k, Operator: apiv1.OpIn, Values: v} }
	mk := func(name string, weight int32, taint string, reqs ...req) NodePool {
		np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		np.Spec.Weight = &weight
		np.Spec.Template.Spec.Requirements = reqs
		if taint != "" {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: taint, Value: name, Effect: corev1.TaintEffectNoSchedule}}
		}
		out := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
		if len(out.InstanceTypes) == 0 {
			tb.Fatalf("pool %s has no types", name)
		}
		return out
	}
	cts := []string{apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand}
	if onDemand {
		cts = cts[1:]
	}
	return []NodePool{
		mk("general", 100, "", in(apiv1.LabelCapacityType, cts...), in(apiv1.LabelInstanceCategory, "c", "m", "r"),
			req{Key: apiv1.LabelInstanceGen, Operator: apiv1.OpGt, Values: []string{"5"}}, in(apiv1.LabelArch, "amd64", "arm64")),
		mk("memory", 50, "dedicated", in(apiv1.LabelCapacityType, apiv1.CapacityTypeOnDemand), in(apiv1.LabelInstanceCategory, "r")),
		mk("gpu", 10, "nvidia.com/gpu", in(apiv1.LabelCapacityType, apiv1.CapacityTypeOnDemand), in(apiv1.LabelInstanceFamily, "g4dn", "g5", "p3")),
	}
}

// mixedDaemonSet is a node agent (150m / 200Mi) tolerating every taint.
func mixedDaemonSet() DaemonSet {
	return DaemonSet{Namespace: "kube-system", Name: "node-agent", Pod: Pod{
		Requests:    resources.List{resources.CPU: 150, resources.Memory: 200 << 20, resources.Pods: 1},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
}

// mixedWorkload is one Deployment, Job or StatefulSet of the mixed input.
type mixedWorkload struct {
	kind               string // web, batch, memory, gpu, arm
	replicas           int
	cpu, memMiB, gpus  int64
	name               string
	spread, tolerateMe bool
}

// mixedInput is issue 21's realistic mixed batch of n pods, deterministic by
// seed, made of workloads whose replicas are identical pods: web
// Deployments (~40%, 5–60 replicas of 250m–1 cpu / 256Mi–2Gi, zone spread
// maxSkew 1 ScheduleAnyway), batch Jobs (~40%, 1–4 cpu / 1–8Gi), memory
// StatefulSets (~15%, 2–4 cpu / 16–64Gi, tolerating the memory pool's taint
// and selecting it by karpenter.sh/nodepool), GPU Jobs (~1%, 1, 2 or 4
// GPUs with 3 cpu / 12Gi per GPU) and arm64 Deployments (~4%, 500m–2 cpu / 1–4Gi, kubernetes.io/arch=arm64), on
// mixedPools with mixedDaemonSet.
func mixedInput(tb testing.TB, n int, seed uint64, onDemand bool) Input {
	rng := rand.New(rand.NewPCG(seed, 21))
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	var ws []mixedWorkload
	left := map[string]int{"web": n * 40 / 100, "batch": n * 40 / 100, "memory": n * 15 / 100, "gpu": n / 100}
	left["arm"] = n - left["web"] - left["batch"] - left["memory"] - left["gpu"]
	for _, kind := range []string{"web", "batch", "memory", "gpu", "arm"} {
		for i := 0; left[kind] > 0; i++ {
			w := mixedWorkload{kind: kind, name: fmt.Sprintf("%s-%03d", kind, i)}
			switch kind {
			case "web":
				w.replicas, w.cpu, w.memMiB, w.spread = 5+rng.IntN(56), pick(250, 500, 750, 1000), pick(256, 512, 1024, 2048), true
			case "batch":
				w.replicas, w.cpu, w.memMiB = 10+rng.IntN(91), pick(1000, 2000, 3000, 4000), pick(1024, 2048, 4096, 8192)
			case "memory":
				w.replicas, w.cpu, w.memMiB, w.tolerateMe = 3+rng.IntN(28), pick(2000, 3000, 4000), pick(16384, 32768, 65536), true
			case "gpu":
				w.replicas, w.gpus = 1+rng.IntN(8), pick(1, 2, 4)
				w.cpu, w.memMiB = 3000*w.gpus, 12288*w.gpus
			case "arm":
				w.replicas, w.cpu, w.memMiB = 5+rng.IntN(26), pick(500, 1000, 2000), pick(1024, 2048, 4096)
			}
			w.replicas = min(w.replicas, left[kind])
			left[kind] -= w.replicas
			ws = append(ws, w)
		}
	}
	var ps []Pod
	for wi, w := range ws {
		for r := 0; r < w.replicas; r++ {
			ps = append(ps, w.pod(r, int64(wi)))
		}
	}
	return Input{Pods: ps, NodePools: mixedPools(tb, onDemand), DaemonSets: []DaemonSet{mixedDaemonSet()}}
}

// pod is replica r of the workload (created at second wi of the batch).
func (w mixedWorkload) pod(r int, wi int64) Pod {
	p := pod(fmt.Sprintf("%s-%04d", w.name, r), w.cpu, w.memMiB)
	p.Namespace = w.kind
	p.UID = p.Namespace + "-" + p.Name
	p.CreationUnix += wi
	p.Labels = map[string]string{"app": w.name}
	switch w.kind {
	case "web":
		p.TopologySpread = zoneSpread(corev1.ScheduleAnyway, &metav1.LabelSelector{MatchLabels: p.Labels})
	case "memory":
		p.NodeSelector = map[string]string{apiv1.LabelNodePool: "memory"}
		p.Tolerations = []corev1.Toleration{tol("dedicated", "memory", corev1.TaintEffectNoSchedule)}
	case "gpu":
		p.Requests[resources.NvidiaGPU] = w.gpus
		p.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	case "arm":
		p.NodeSelector = map[string]string{apiv1.LabelArch: "arm64"}
	}
	return p
}

// BenchmarkMixed: go test -run xxx -bench Mixed -benchmem ./solver/
// (spot=false: every pool on-demand only).
func BenchmarkMixed(b *testing.B) {
	for _, spot := range []bool{true, false} {
		for _, n := range mixedSizes {
			in := mixedInput(b, n, 1, !spot)
			in.Budget = *benchBudget
			b.Run(fmt.Sprintf("spot=%t/pods=%d", spot, n), func(b *testing.B) {
				benchSolve(b, in)
			})
		}
	}
}

// benchBound adds the lower bound and the ratio to the solve benchmarks
// (computed outside the timer; it takes seconds per input).
var benchBound = flag.Bool("bound", false, "benchmarks: report the lower bound and ratio")

// benchBudget is the Input.Budget of the mixed benchmarks (-budget=-1ns:
// the whole search).
var benchBudget = flag.Duration("budget", 0, "mixed benchmarks: solver budget (0: DefaultBudget, negative: none)")

// benchSolve solves in b.N times and reports pods/s, the plan's figures,
// allocations per pod and (outside the timer) the lower bound and ratio.
func benchSolve(b *testing.B, in Input) {
	b.ReportAllocs()
	var plan Plan
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for b.Loop() {
		plan = Solve(in)
	}
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*len(in.Pods)), "allocs/pod")
	b.ReportMetric(float64(len(in.Pods))*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(plan.Price(), "$/hour")
	b.ReportMetric(float64(len(plan.NewNodeClaims)), "nodes")
	b.ReportMetric(float64(len(plan.Unschedulable)), "unsched")
	if *benchBound {
		lb := LowerBound(in)
		b.ReportMetric(lb, "lowerbound$/hour")
		if lb > 0 {
			b.ReportMetric(plan.Price()/lb, "ratio")
		}
	}
}
