package solver

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// seedType is a synthetic type with exactly vcpu cpus and memGiB usable,
// one spot offering in zone-a at price.
func seedType(name string, vcpu, memGiB int64, price float64) InstanceTypeOption {
	it := &catalog.InstanceType{Name: name, Family: name, Category: "m", Generation: 1, Size: "x",
		Arch: "amd64", VCPU: int(vcpu), MemoryMiB: memGiB << 10, MaxPods: 110, OnDemandPrice: price}
	var c resources.List
	c[resources.CPU], c[resources.Memory], c[resources.Pods], c[resources.EphemeralStorage] = 1000*vcpu, memGiB<<30, 110, 100<<30
	return InstanceTypeOption{Type: it, Shape: catalog.NodeShape{Capacity: c, Allocatable: c},
		Offerings: []catalog.Offering{{Zone: testZones[0], CapacityType: apiv1.CapacityTypeSpot, Price: price, Available: true}}}
}

// A mixed batch the greedy packs badly: memory-heavy pods (1 cpu / 12Gi)
// tolerate the tainted, higher-weight memory pool, so first-fit decreasing
// opens memory nodes (2 cpu / 32Gi, $0.30) for them, two per node, and the
// small web pods (500m / 1Gi) then need general nodes of their own. The
// configuration LP puts 9 memory-heavy and 12 web pods on one general
// big node (16 cpu / 128Gi, $1.00): the web pod opens it in the general
// pool (its only pool) and the memory-heavy pods join it, as Karpenter
// lets a pod join any open claim whose taints it tolerates.
func TestLPGuidedBeatsGreedy(t *testing.T) {
	taint := corev1.Taint{Key: "workload", Value: "memory", Effect: corev1.TaintEffectNoSchedule}
	in := Input{NodePools: []NodePool{
		{Name: "general", NodesLimit: -1, InstanceTypes: []InstanceTypeOption{
			seedType("big", 16, 128, 1.00), seedType("cpu4", 4, 8, 0.40)}},
		{Name: "memory", Weight: 10, NodesLimit: -1, Taints: []corev1.Taint{taint}, InstanceTypes: []InstanceTypeOption{
			seedType("mem", 2, 32, 0.30)}},
	}}
	for _, p := range pods("cache", 9, 1000, 12<<10) {
		p.Tolerations = []corev1.Toleration{{Key: "workload", Value: "memory", Effect: corev1.TaintEffectNoSchedule}}
		in.Pods = append(in.Pods, p)
	}
	in.Pods = append(in.Pods, pods("web", 12, 500, 1<<10)...)

	unguided := in
	unguided.DisableLPGuided = true
	greedy := Solve(unguided)
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	lb := LowerBound(in)
	t.Logf("greedy %.2f $/hour on %d nodes, LP-guided %.2f on %d, bound %.2f",
		greedy.Price(), len(greedy.NewNodeClaims), plan.Price(), len(plan.NewNodeClaims), lb)
	if len(plan.Unschedulable) != 0 || len(greedy.Unschedulable) != 0 {
		t.Fatalf("unschedulable pods: %d LP-guided, %d greedy", len(plan.Unschedulable), len(greedy.Unschedulable))
	}
	if greedy.Price() < 2.29 {
		t.Errorf("greedy plan %.2f, expected the memory-pool packing (>= 2.30)", greedy.Price())
	}
	if len(plan.NewNodeClaims) != 1 || plan.NewNodeClaims[0].NodePool != "general" ||
		plan.NewNodeClaims[0].InstanceTypes[0].Type.Name != "big" || plan.Price() > 1.0+1e-9 {
		t.Errorf("LP-guided plan %.2f on %d claims, want one general big node at 1.00", plan.Price(), len(plan.NewNodeClaims))
	}
	if lb > plan.Price()+1e-9 {
		t.Errorf("lower bound %.3f above the plan %.3f", lb, plan.Price())
	}
}

// Input B (issue 3): the plan costs at most 1.10 × the lower bound, every
// pod placed, the web pods' zone spread within maxSkew 1, and no claim
// opened by a pod outside the highest-weight pool able to take it.
func TestInputBRatio(t *testing.T) {
	if testing.Short() {
		t.Skip("solves Input B (10,000 pods, several seconds)")
	}
	in := inputB(t)
	in.Budget = -1 // the whole search: the ratio must not depend on the machine's load
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("%d unschedulable, first %+v", len(plan.Unschedulable), plan.Unschedulable[0])
	}
	lb := LowerBound(in)
	t.Logf("Input B: %.2f $/hour on %d nodes, bound %.2f, ratio %.3f", plan.Price(), len(plan.NewNodeClaims), lb, plan.Price()/lb)
	if plan.Price() > 1.10*lb || plan.Price() < lb {
		t.Errorf("price %.2f, want within [%.2f, %.2f]", plan.Price(), lb, 1.10*lb)
	}
	byKey := map[string]*Pod{}
	for i := range in.Pods {
		byKey[in.Pods[i].Key()] = &in.Pods[i]
	}
	perZone := map[string]int{}
	for _, nc := range plan.NewNodeClaims {
		var zones []string
		for _, r := range nc.Requirements {
			if r.Key == apiv1.LabelZone {
				zones = r.Values
			}
		}
		for _, k := range nc.Pods {
			if byKey[k].Labels["app"] != "web" {
				continue
			}
			if len(zones) != 1 {
				t.Fatalf("claim with web pod %s not pinned to one zone: %v", k, zones)
			}
			perZone[zones[0]]++
		}
		// The cache pods tolerate the memory pool (weight 10): a general
		// claim must have been opened (its first pod) by another pod.
		if first := byKey[nc.Pods[0]]; nc.NodePool == "general" && first.Labels["app"] == "cache" {
			t.Errorf("general claim opened by memory-pool pod %s", nc.Pods[0])
		}
	}
	lo, hi, n := 1<<30, 0, 0
	for _, z := range catalog.DefaultZones {
		lo, hi, n = min(lo, perZone[z]), max(hi, perZone[z]), n+perZone[z]
	}
	if n != 4000 || hi-lo > 1 {
		t.Errorf("web pods per zone %v (total %d), want skew <= 1", perZone, n)
	}
}
