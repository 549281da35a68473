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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mixedSizes are the batch sizes of the mixed benchmark input.
var mixedSizes = []int{1000, 2000, 5000, 10000, 20000}

// mixedSolverPools converts the pools over the real catalog with the
// offerings of market (nil: the catalog's).
func mixedSolverPools(tb testing.TB, nps []*apiv1.NodePool, market *catalog.Market) []NodePool {
	var out []NodePool
	for _, np := range nps {
		pl := NodePoolFromMarket(np, nil, catalog.MustDefault(), market, catalog.DefaultZones, nil)
		if len(pl.InstanceTypes) == 0 {
			tb.Fatalf("pool %s has no types", np.Name)
		}
		out = append(out, pl)
	}
	return out
}

// mixedAPIPools are the NodePools of a pool mix: "" is the three pools
// over the real catalog: general (weight 100; c, m, r categories,
// generation > 5, amd64 and arm64, spot and on-demand), memory (weight 50;
// r category, on-demand, tainted dedicated=memory:NoSchedule) and gpu
// (weight 10; g4dn, g5, p3, on-demand, tainted nvidia.com/gpu:NoSchedule),
// the general pool on-demand only too with onDemand;
// "split" is graviton (weight 100; c, m, r, generation > 6, arm64, spot
// and on-demand, limited to 4,000 vCPUs), general (weight 50; c, m, r, i,
// generation > 5, spot and on-demand), memory (weight 50; r and x, spot
// and on-demand, tainted dedicated=memory:NoSchedule) and gpu (weight 10;
// g4dn, g5, g6, on-demand, tainted nvidia.com/gpu:NoSchedule).
func mixedAPIPools(onDemand bool, mix string) []*apiv1.NodePool {
	in := func(k string, v ...string) req { return req{Key: k, Operator: apiv1.OpIn, Values: v} }
	gt := func(k, v string) req { return req{Key: k, Operator: apiv1.OpGt, Values: []string{v}} }
	mk := func(name string, weight int32, taint string, limits corev1.ResourceList, reqs ...req) *apiv1.NodePool {
		np := &apiv1.NodePool{TypeMeta: metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		np.Spec.Weight = &weight
		np.Spec.Limits = limits
		np.Spec.Template.Spec.Requirements = reqs
		np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
		if taint != "" {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: taint, Value: name, Effect: corev1.TaintEffectNoSchedule}}
		}
		return np
	}
	od := in(apiv1.LabelCapacityType, apiv1.CapacityTypeOnDemand)
	both := in(apiv1.LabelCapacityType, apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand)
	if mix == "split" {
		return []*apiv1.NodePool{
			mk("graviton", 100, "", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4000")}, both,
				in(apiv1.LabelInstanceCategory, "c", "m", "r"), gt(apiv1.LabelInstanceGen, "6"), in(apiv1.LabelArch, "arm64")),
			mk("general", 50, "", nil, both, in(apiv1.LabelInstanceCategory, "c", "m", "r", "i"), gt(apiv1.LabelInstanceGen, "5")),
			mk("memory", 50, "dedicated", nil, both, in(apiv1.LabelInstanceCategory, "r", "x")),
			mk("gpu", 10, "nvidia.com/gpu", nil, od, in(apiv1.LabelInstanceFamily, "g4dn", "g5", "g6")),
		}
	}
	general := both
	if onDemand {
		general = od
	}
	return []*apiv1.NodePool{
		mk("general", 100, "", nil, general, in(apiv1.LabelInstanceCategory, "c", "m", "r"), gt(apiv1.LabelInstanceGen, "5"), in(apiv1.LabelArch, "amd64", "arm64")),
		mk("memory", 50, "dedicated", nil, od, in(apiv1.LabelInstanceCategory, "r")),
		mk("gpu", 10, "nvidia.com/gpu", nil, od, in(apiv1.LabelInstanceFamily, "g4dn", "g5", "p3")),
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

// mixedVariant is one form of the mixed input: the generator's seed, its
// pod shapes, its NodePools and its spot prices.
type mixedVariant struct {
	seed uint64
	// wide draws from more shapes: cpu 100m-8, memory 128Mi-32Gi per
	// class, memory pods 1-8 cpu / 8-128Gi.
	wide bool
	// pools: "" is mixedAPIPools's default; "split" a pool mix with a limited arm64
	// pool first (mixedAPIPools).
	pools string
	// spot: "" is the catalog's (the advisor's saving), "od" every pool
	// on-demand only, "market" a per-type saving drawn with the seed
	// (mixedSpotMarket): spot that is not the generator's.
	spot string
}

func (v mixedVariant) String() string {
	s := fmt.Sprintf("seed=%d", v.seed)
	if v.wide {
		s += "/wide"
	}
	if v.pools != "" {
		s += "/pools=" + v.pools
	}
	if v.spot != "" {
		s += "/spot=" + v.spot
	}
	return s
}

// mixedInput is issue 21's realistic mixed batch of n pods, deterministic by
// seed, made of workloads whose replicas are identical pods: web
// Deployments (~40%, 5–60 replicas of 250m–1 cpu / 256Mi–2Gi, zone spread
// maxSkew 1 ScheduleAnyway), batch Jobs (~40%, 1–4 cpu / 1–8Gi), memory
// StatefulSets (~15%, 2–4 cpu / 16–64Gi, tolerating the memory pool's taint
// and selecting it by karpenter.sh/nodepool), GPU Jobs (~1%, 1, 2 or 4
// GPUs with 3 cpu / 12Gi per GPU) and arm64 Deployments (~4%, 500m–2 cpu / 1–4Gi, kubernetes.io/arch=arm64), on
// mixedAPIPools' default pools with mixedDaemonSet.
func mixedInput(tb testing.TB, n int, seed uint64, onDemand bool) Input {
	v := mixedVariant{seed: seed}
	if onDemand {
		v.spot = "od"
	}
	return mixedInputOf(tb, n, v)
}

// mixedInputOf is the mixed input of n pods in variant v.
func mixedInputOf(tb testing.TB, n int, v mixedVariant) Input {
	ws := mixedWorkloads(n, v)
	var ps []Pod
	for wi, w := range ws {
		for r := 0; r < w.replicas; r++ {
			ps = append(ps, w.pod(r, int64(wi)))
		}
	}
	var market *catalog.Market
	if v.spot == "market" {
		market = mixedSpotMarket(v.seed)
	}
	pools := mixedSolverPools(tb, mixedAPIPools(v.spot == "od", v.pools), market)
	return Input{Pods: ps, NodePools: pools, DaemonSets: []DaemonSet{mixedDaemonSet()}}
}

// mixedWorkloads draws the workloads of the mixed input of n pods.
func mixedWorkloads(n int, v mixedVariant) []mixedWorkload {
	rng := rand.New(rand.NewPCG(v.seed, 21))
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	var ws []mixedWorkload
	left := map[string]int{"web": n * 40 / 100, "batch": n * 40 / 100, "memory": n * 15 / 100, "gpu": n / 100}
	left["arm"] = n - left["web"] - left["batch"] - left["memory"] - left["gpu"]
	for _, kind := range []string{"web", "batch", "memory", "gpu", "arm"} {
		for i := 0; left[kind] > 0; i++ {
			w := mixedWorkload{kind: kind, name: fmt.Sprintf("%s-%03d", kind, i)}
			switch {
			case kind == "web" && v.wide:
				w.replicas, w.cpu, w.memMiB, w.spread = 5+rng.IntN(56), pick(100, 250, 500, 750, 1000, 1500), pick(128, 256, 512, 1024, 2048, 3072), true
			case kind == "web":
				w.replicas, w.cpu, w.memMiB, w.spread = 5+rng.IntN(56), pick(250, 500, 750, 1000), pick(256, 512, 1024, 2048), true
			case kind == "batch" && v.wide:
				w.replicas, w.cpu, w.memMiB = 10+rng.IntN(91), pick(500, 1000, 1500, 2000, 3000, 4000, 6000, 8000), pick(512, 1024, 2048, 4096, 8192, 16384, 32768)
			case kind == "batch":
				w.replicas, w.cpu, w.memMiB = 10+rng.IntN(91), pick(1000, 2000, 3000, 4000), pick(1024, 2048, 4096, 8192)
			case kind == "memory" && v.wide:
				w.replicas, w.cpu, w.memMiB, w.tolerateMe = 3+rng.IntN(28), pick(1000, 2000, 3000, 4000, 6000, 8000), pick(8192, 16384, 24576, 32768, 65536, 131072), true
			case kind == "memory":
				w.replicas, w.cpu, w.memMiB, w.tolerateMe = 3+rng.IntN(28), pick(2000, 3000, 4000), pick(16384, 32768, 65536), true
			case kind == "gpu":
				w.replicas, w.gpus = 1+rng.IntN(8), pick(1, 2, 4)
				w.cpu, w.memMiB = 3000*w.gpus, 12288*w.gpus
			case kind == "arm" && v.wide:
				w.replicas, w.cpu, w.memMiB = 5+rng.IntN(26), pick(250, 500, 1000, 2000, 4000), pick(512, 1024, 2048, 4096, 8192)
			case kind == "arm":
				w.replicas, w.cpu, w.memMiB = 5+rng.IntN(26), pick(500, 1000, 2000), pick(1024, 2048, 4096)
			}
			w.replicas = min(w.replicas, left[kind])
			left[kind] -= w.replicas
			ws = append(ws, w)
		}
	}
	return ws
}

// mixedSpotMarket prices every catalog type's spot offerings at a saving
// drawn per type from 30-80% (the same in every zone), not the advisor's.
func mixedSpotMarket(seed uint64) *catalog.Market {
	rng := rand.New(rand.NewPCG(seed, 99))
	prices := map[string]map[string]float64{}
	for _, it := range catalog.MustDefault().Types {
		save := 0.30 + 0.50*rng.Float64()
		byZone := map[string]float64{}
		for _, z := range catalog.DefaultZones {
			byZone[z] = it.OnDemandPrice * (1 - save)
		}
		prices[it.Name] = byZone
	}
	m := catalog.NewMarket()
	m.SetSpotPrices(prices)
	return m
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

// BenchmarkMixed: go test -run xxx -bench Mixed -benchtime 1x -benchmem ./solver/
// (spot=false: every pool on-demand only; hard: mixedHardVariants at
// 10,000 pods). Beside the time each reports the plan's usd/h and, computed
// outside the timer, x-full (its cost over the whole search's, Budget < 0)
// and x-bound (over LowerBound); the size sweep only with -bound.
func BenchmarkMixed(b *testing.B) {
	for _, spot := range []bool{true, false} {
		for _, n := range mixedSizes {
			in := mixedInput(b, n, 1, !spot)
			in.Budget = *benchBudget
			b.Run(fmt.Sprintf("spot=%t/pods=%d", spot, n), func(b *testing.B) {
				plan := benchSolve(b, in)
				if *benchBound {
					reportQuality(b, in, plan)
				}
			})
		}
	}
	for _, v := range mixedHardVariants {
		in := mixedInputOf(b, 10000, v)
		in.Budget = *benchBudget
		b.Run("hard/"+v.String(), func(b *testing.B) {
			reportQuality(b, in, benchSolve(b, in))
		})
	}
}

// reportQuality reports the plan's cost over the whole search's (x-full)
// and over the lower bound (x-bound), with the bound (bound-usd/h).
func reportQuality(b *testing.B, in Input, plan Plan) {
	b.StopTimer()
	full := in
	full.Budget = -1
	if fp := Solve(full); fp.Price() > 0 {
		b.ReportMetric(plan.Price()/fp.Price(), "x-full")
	}
	if lb := LowerBound(in); lb > 0 {
		b.ReportMetric(lb, "bound-usd/h")
		b.ReportMetric(plan.Price()/lb, "x-bound")
	}
}

// benchBound adds x-full and x-bound to the mixed size sweep (computed
// outside the timer; they take seconds per input).
var benchBound = flag.Bool("bound", false, "mixed benchmarks: report x-full and x-bound for the size sweep too")

// benchBudget is the Input.Budget of the mixed benchmarks (-budget=-1ns:
// the whole search).
var benchBudget = flag.Duration("budget", 0, "mixed benchmarks: solver budget (0: the default search, negative: none)")

// benchSolve solves in b.N times and reports pods/s, CPU seconds per
// solve (the process's: steadier than wall time on a shared machine), the
// plan's figures and allocations per pod; it returns the plan.
func benchSolve(b *testing.B, in Input) Plan {
	b.ReportAllocs()
	var plan Plan
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	for b.Loop() {
		plan = Solve(in)
	}
	b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*len(in.Pods)), "allocs/pod")
	b.ReportMetric(float64(len(in.Pods))*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(plan.Price(), "usd/h")
	b.ReportMetric(float64(len(plan.NewNodeClaims)), "nodes")
	b.ReportMetric(float64(len(plan.Unschedulable)), "unsched")
	return plan
}

// mixedHardVariants are the mixed inputs where the default plan was
// furthest from the whole search under earlier default schedules (seeds
// 1-3 of the wide shapes with market spot, the split pools), the ones
// where one pass of today's schedule alone finds the whole search's plan
// (TestDefaultSearchNearWhole), and the one the default search took
// longest on (seed=1/wide/pools=split/spot=market).
var mixedHardVariants = []mixedVariant{
	{seed: 1, wide: true, spot: "market"},
	{seed: 2, wide: true, spot: "market"},
	{seed: 3, wide: true, spot: "market"},
	{seed: 2, wide: true},
	{seed: 3, pools: "split", spot: "market"},
	{seed: 4, wide: true, spot: "market"},
	{seed: 9, wide: true, pools: "split"},
	{seed: 8, wide: true, pools: "split", spot: "market"},
	{seed: 4, wide: true, pools: "split", spot: "market"},
	{seed: 1, wide: true, pools: "split", spot: "market"},
}
