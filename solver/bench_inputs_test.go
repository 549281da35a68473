package solver

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inputA is the shape of Karpenter's scheduling benchmark (issue 3): 400
// synthetic types, type i (0..399) with i+1 vCPU, 2(i+1) GiB, 10(i+1) pods,
// 100m cpu / 10Mi memory overhead, 0.31475·(i+1) USD/hour on-demand and spot
// in three zones; one NodePool, no limits; n pods in five equal groups (no
// constraint; zone spread maxSkew 1; hostname spread maxSkew 1; required
// zone affinity to the own group; required hostname anti-affinity to the own
// group); cpu from {100m,250m,500m,1000m,1500m}, memory from
// {100,256,512,1024,2048,4096}Mi, drawn with a fixed seed.
func inputA(n int, seed uint64) Input {
	np := NodePool{Name: "default", NodesLimit: -1}
	for i := 0; i < 400; i++ {
		v := int64(i + 1)
		it := &catalog.InstanceType{Name: fmt.Sprintf("fake-it-%03d", i), Family: "fake", Category: "f", Generation: 1, Size: fmt.Sprint(v),
			Arch: "amd64", VCPU: int(v), MemoryMiB: 2 * v << 10, MaxPods: int(10 * v), OnDemandPrice: 0.31475 * float64(v)}
		var c resources.List
		c[resources.CPU], c[resources.Memory], c[resources.Pods], c[resources.EphemeralStorage] = 1000*v, 2*v<<30, 10*v, 100<<30
		a := c
		a[resources.CPU] -= 100
		a[resources.Memory] -= 10 << 20
		opt := InstanceTypeOption{Type: it, Shape: catalog.NodeShape{Capacity: c, Allocatable: a}}
		for _, ct := range []string{apiv1.CapacityTypeOnDemand, apiv1.CapacityTypeSpot} {
			for _, z := range testZones {
				opt.Offerings = append(opt.Offerings, catalog.Offering{Zone: z, CapacityType: ct, Price: it.OnDemandPrice, Available: true})
			}
		}
		np.InstanceTypes = append(np.InstanceTypes, opt)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	cpus := []int64{100, 250, 500, 1000, 1500}
	mems := []int64{100, 256, 512, 1024, 2048, 4096}
	groups := []string{"plain", "zone-spread", "host-spread", "zone-affinity", "host-anti"}
	var ps []Pod
	for g, name := range groups {
		s := &metav1.LabelSelector{MatchLabels: map[string]string{"group": name}}
		for i := 0; i < n/len(groups); i++ {
			p := pod(fmt.Sprintf("%s-%05d", name, i), cpus[rng.IntN(len(cpus))], mems[rng.IntN(len(mems))])
			p.Labels = map[string]string{"group": name}
			switch g {
			case 1:
				p.TopologySpread = zoneSpread(corev1.DoNotSchedule, s)
			case 2:
				p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: s}}
			case 3:
				p.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelZone, LabelSelector: s}}}
			case 4:
				p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: s}}}
			}
			ps = append(ps, p)
		}
	}
	return Input{Pods: ps, NodePools: []NodePool{np}}
}

// inputB is the real catalog (every priced type, both architectures) under
// three NodePools (general: spot and on-demand, any arch; memory: r/x
// families, tainted, weight 10; gpu: nvidia, tainted) with a DaemonSet of
// 200m/256Mi and 10,000 pods: 4,000 web (500m/1Gi, zone spread maxSkew 1),
// 3,000 batch jobs (cpu 250m–4, memory 512Mi–8Gi), 2,900 memory-heavy
// replicas (1 cpu / 12Gi, tolerating the memory taint) and 100 GPU pods
// (4 cpu / 16Gi / 1 GPU).
func inputB(tb testing.TB) Input {
	cat := catalog.MustDefault()
	mk := func(name string, weight int32, reqs []apiv1.NodeSelectorRequirementWithMinValues, taints []corev1.Taint) NodePool {
		np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		w := weight
		np.Spec.Weight = &w
		np.Spec.Template.Spec.Requirements = reqs
		np.Spec.Template.Spec.Taints = taints
		out := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
		if len(out.InstanceTypes) == 0 {
			tb.Fatalf("pool %s has no types", name)
		}
		return out
	}
	in := func(k string, v ...string) apiv1.NodeSelectorRequirementWithMinValues {
		return apiv1.NodeSelectorRequirementWithMinValues{Key: k, Operator: apiv1.OpIn, Values: v}
	}
	pools := []NodePool{
		mk("general", 0, []apiv1.NodeSelectorRequirementWithMinValues{in(apiv1.LabelCapacityType, "spot", "on-demand")}, nil),
		mk("memory", 10, []apiv1.NodeSelectorRequirementWithMinValues{in(apiv1.LabelInstanceCategory, "r", "x")},
			[]corev1.Taint{{Key: "workload", Value: "memory", Effect: corev1.TaintEffectNoSchedule}}),
		mk("gpu", 0, []apiv1.NodeSelectorRequirementWithMinValues{in(apiv1.LabelInstanceGPUManu, "nvidia")},
			[]corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}),
	}
	ds := DaemonSet{Namespace: "kube-system", Name: "node-agent", Pod: Pod{
		Requests: resources.List{resources.CPU: 200, resources.Memory: 256 << 20, resources.Pods: 1}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	rng := rand.New(rand.NewPCG(7, 0))
	var ps []Pod
	webSel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	for i := 0; i < 4000; i++ {
		p := pod(fmt.Sprintf("web-%05d", i), 500, 1024)
		p.Labels = map[string]string{"app": "web"}
		p.TopologySpread = zoneSpread(corev1.DoNotSchedule, webSel)
		ps = append(ps, p)
	}
	bc, bm := []int64{250, 500, 1000, 2000, 4000}, []int64{512, 1024, 2048, 4096, 8192}
	for i := 0; i < 3000; i++ {
		p := pod(fmt.Sprintf("batch-%05d", i), bc[rng.IntN(len(bc))], bm[rng.IntN(len(bm))])
		p.Labels = map[string]string{"app": "batch"}
		ps = append(ps, p)
	}
	for i := 0; i < 2900; i++ {
		p := pod(fmt.Sprintf("cache-%05d", i), 1000, 12<<10)
		p.Labels = map[string]string{"app": "cache"}
		p.Tolerations = []corev1.Toleration{{Key: "workload", Value: "memory", Effect: corev1.TaintEffectNoSchedule}}
		ps = append(ps, p)
	}
	for i := 0; i < 100; i++ {
		p := pod(fmt.Sprintf("train-%05d", i), 4000, 16<<10)
		p.Requests[resources.NvidiaGPU] = 1
		p.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		ps = append(ps, p)
	}
	return Input{Pods: ps, NodePools: pools, DaemonSets: []DaemonSet{ds}}
}

func reportPlan(b *testing.B, in Input, plan Plan, start time.Time) {
	b.ReportMetric(float64(len(in.Pods))*float64(b.N)/time.Since(start).Seconds(), "pods/s")
	b.ReportMetric(plan.Price(), "$/hour")
	b.ReportMetric(float64(len(plan.NewNodeClaims)), "nodes")
	b.ReportMetric(float64(len(plan.Unschedulable)), "unsched")
}

// solveTimed solves in b.N times, reports the plan with reportPlan and
// stops the timer: what the caller reports next (the lower bound) is not
// timed.
func solveTimed(b *testing.B, in Input) Plan {
	b.ReportAllocs()
	var plan Plan
	start := time.Now()
	for i := 0; i < b.N; i++ {
		plan = Solve(in)
	}
	reportPlan(b, in, plan, start)
	b.StopTimer()
	return plan
}

// BenchmarkInputA: go test -run xxx -bench InputA -benchtime 3x ./solver/
func BenchmarkInputA(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		in := inputA(n, 1)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			solveTimed(b, in)
			b.ReportMetric(LowerBound(in), "lowerbound$/hour")
			if n == 20000 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapMiB")
			}
		})
	}
}

// BenchmarkInputB: go test -run xxx -bench InputB -benchtime 3x ./solver/
func BenchmarkInputB(b *testing.B) {
	in := inputB(b)
	plan := solveTimed(b, in)
	lb := LowerBound(in)
	b.ReportMetric(lb, "lowerbound$/hour")
	b.ReportMetric(plan.Price()/lb, "ratio")
}

// TestInputACost pins the cost quality on Input A at N=1000: every pod
// placed, cheaper than Karpenter's ~$343/hour.
func TestInputACost(t *testing.T) {
	in := inputA(1000, 1)
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("%d unschedulable, first %+v", len(plan.Unschedulable), plan.Unschedulable[0])
	}
	lb := LowerBound(in)
	t.Logf("Input A N=1000: %.2f $/hour on %d nodes, lower bound %.2f", plan.Price(), len(plan.NewNodeClaims), lb)
	if plan.Price() >= 343 || plan.Price() < lb {
		t.Errorf("price %.2f, want below 343 and at least the lower bound %.2f", plan.Price(), lb)
	}
	// Constraint checks on the plan: anti-affinity and hostname spread groups
	// at most one pod per node; zone-affinity group in one zone; zone spread
	// balanced within 1.
	perZone := map[string]int{}
	affZones := map[string]bool{}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		cnt := map[string]int{}
		for _, p := range nc.Pods {
			var g string
			fmt.Sscanf(p, "default/%s", &g)
			for _, name := range []string{"host-anti", "host-spread", "zone-spread", "zone-affinity"} {
				if len(g) > len(name) && g[:len(name)+1] == name+"-" {
					cnt[name]++
				}
			}
		}
		if cnt["host-anti"] > 1 || cnt["host-spread"] > 1 {
			t.Fatalf("claim %d holds %v", i, cnt)
		}
		z := zoneOfClaim(nc)
		if cnt["zone-spread"] > 0 || cnt["zone-affinity"] > 0 {
			if z == "" {
				t.Fatalf("claim %d with zone-constrained pods is not pinned", i)
			}
			perZone[z] += cnt["zone-spread"]
			if cnt["zone-affinity"] > 0 {
				affZones[z] = true
			}
		}
	}
	if len(affZones) != 1 {
		t.Errorf("zone-affinity group spans zones %v", affZones)
	}
	lo, hi := 1<<30, 0
	for _, z := range testZones {
		lo, hi = min(lo, perZone[z]), max(hi, perZone[z])
	}
	if hi-lo > 1 {
		t.Errorf("zone spread %v has skew %d", perZone, hi-lo)
	}
}
