package solver

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

const nodeClassRef = `nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}`

// simplePool is an on-demand pool of the given families.
func simplePool(t testing.TB, name string, weight int, families string, extra string) NodePool {
	return poolYAML(t, fmt.Sprintf(`
metadata: {name: %s}
spec:
  weight: %d
  %s
  template:
    spec:
      %s
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [%s]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`, name, weight, extra, nodeClassRef, families))
}

// familiesPool is a pool of the given families, spot and on-demand.
func familiesPool(t testing.TB, name string, families string) NodePool {
	return poolYAML(t, fmt.Sprintf(`
metadata: {name: %s}
spec:
  template:
    spec:
      %s
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [%s]}
`, name, nodeClassRef, families))
}

func typeNames(nc *NewNodeClaim) []string {
	var out []string
	for _, o := range nc.InstanceTypes {
		out = append(out, o.Type.Name)
	}
	return out
}

// midCPUPool is an on-demand m6i pool whose instance-cpu requirements are
// lo low and hi high (e.g. Gt 3, Lt 9).
func midCPUPool(t *testing.T, lo, low, hi, high string) NodePool {
	return poolYAML(t, fmt.Sprintf(`
metadata: {name: mid}
spec:
  template:
    spec:
      `+nodeClassRef+`
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i]}
      - {key: karpenter.k8s.aws/instance-cpu, operator: %s, values: ["%s"]}
      - {key: karpenter.k8s.aws/instance-cpu, operator: %s, values: ["%s"]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`, lo, low, hi, high))
}

func TestSolveGtLtRequirements(t *testing.T) {
	mid := midCPUPool(t, "Gt", "3", "Lt", "9")
	if got := len(mid.InstanceTypes); got != 2 {
		t.Fatalf("pool has %d types, want m6i.xlarge and m6i.2xlarge", got)
	}
	small := pod("small", 500, 512)
	big := pod("big-memory", 500, 512)
	big.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelInstanceMemory, Operator: apiv1.OpGt, Values: []string{"20000"}}}}
	tiny := pod("tiny-cpu", 500, 512)
	tiny.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelInstanceCPU, Operator: apiv1.OpLt, Values: []string{"4"}}}}
	in := Input{Pods: []Pod{small, big, tiny}, NodePools: []NodePool{mid}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)

	for _, o := range claimOf(&plan, "default/small").InstanceTypes {
		if o.Type.VCPU != 4 && o.Type.VCPU != 8 {
			t.Errorf("small pod offered %s with %d vCPU", o.Type.Name, o.Type.VCPU)
		}
	}
	if got := typeNames(claimOf(&plan, "default/big-memory")); !reflect.DeepEqual(got, []string{"m6i.2xlarge"}) {
		t.Errorf("instance-memory Gt 20000 claim types = %v, want [m6i.2xlarge]", got)
	}
	reason, ok := unschedulable(&plan, "default/tiny-cpu")
	if want := "incompatible with NodePool mid: no instance type or offering meets requirement karpenter.k8s.aws/instance-cpu Lt [4]"; !ok || reason != want {
		t.Errorf("reason = %q, want %q", reason, want)
	}
}

// Gte and Lte (Karpenter v1.9+) are inclusive: Gte 4 and Lte 8 admit the
// 4- and 8-vCPU types that Gt 3 and Lt 9 admit; a pod's Gt meets the pool's
// Lte at the bound itself.
func TestSolveGteLteRequirements(t *testing.T) {
	mid := midCPUPool(t, "Gte", "4", "Lte", "8")
	var names []string
	for _, it := range mid.InstanceTypes {
		names = append(names, it.Type.Name)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"m6i.2xlarge", "m6i.xlarge"}) {
		t.Fatalf("pool types = %v, want m6i.2xlarge and m6i.xlarge", names)
	}
	eight := pod("eight-cpu", 500, 512)
	eight.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelInstanceCPU, Operator: apiv1.OpGt, Values: []string{"7"}}}}
	tiny := pod("tiny-cpu", 500, 512)
	tiny.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelInstanceCPU, Operator: apiv1.OpLt, Values: []string{"4"}}}}
	in := Input{Pods: []Pod{eight, tiny}, NodePools: []NodePool{mid}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := typeNames(claimOf(&plan, "default/eight-cpu")); !reflect.DeepEqual(got, []string{"m6i.2xlarge"}) {
		t.Errorf("instance-cpu Gt 7 within Lte 8: claim types = %v, want [m6i.2xlarge]", got)
	}
	reason, ok := unschedulable(&plan, "default/tiny-cpu")
	if want := "incompatible with NodePool mid: no instance type or offering meets requirement karpenter.k8s.aws/instance-cpu Lt [4]"; !ok || reason != want {
		t.Errorf("reason = %q, want %q", reason, want)
	}
}

func TestSolveWeightIsStrictPriority(t *testing.T) {
	// c6i is cheaper per vCPU than m6i, but the heavier pool wins.
	primary := simplePool(t, "primary", 100, "m6i", `limits: {cpu: "8"}`)
	fallback := simplePool(t, "fallback", 10, "c6i", "")

	in := Input{Pods: []Pod{pod("one", 1000, 1024)}, NodePools: []NodePool{fallback, primary}}
	plan := Solve(in)
	if nc := claimOf(&plan, "default/one"); nc == nil || nc.NodePool != "primary" {
		t.Fatalf("pod went to %+v, want NodePool primary", nc)
	}

	// Six 3-cpu pods: primary's 8-cpu limit holds two of them (one
	// m6i.2xlarge); the rest fall back.
	in = Input{Pods: pods("p", 6, 3000, 1024), NodePools: []NodePool{fallback, primary}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	perPool := map[string]int{}
	for _, nc := range plan.NewNodeClaims {
		perPool[nc.NodePool] += len(nc.Pods)
	}
	if perPool["primary"] != 2 || perPool["fallback"] != 4 || len(plan.Unschedulable) != 0 {
		t.Errorf("pods per pool = %v, unschedulable %v; want primary 2, fallback 4", perPool, plan.Unschedulable)
	}

	// Primary already at its limit (usage equal to the limit is allowed, but
	// nothing more), or at its node-count limit: everything falls back.
	full := primary
	full.Usage[resources.CPU] = 8000
	counted := primary
	counted.NodesLimit, counted.NodeCount = 2, 2
	for _, p := range []NodePool{full, counted} {
		in = Input{Pods: pods("p", 3, 1000, 1024), NodePools: []NodePool{fallback, p}}
		plan = Solve(in)
		checkPlanInvariants(t, in, &plan)
		for _, nc := range plan.NewNodeClaims {
			if nc.NodePool != "fallback" {
				t.Errorf("claim in %s despite its limits", nc.NodePool)
			}
		}
	}

	// No fallback: the reason names the limit.
	in = Input{Pods: []Pod{pod("x", 1000, 0)}, NodePools: []NodePool{full}}
	plan = Solve(in)
	if r, _ := unschedulable(&plan, "default/x"); r != "NodePool primary limits reached (cpu)" {
		t.Errorf("reason = %q", r)
	}
	in = Input{Pods: []Pod{pod("x", 1000, 0)}, NodePools: []NodePool{counted}}
	plan = Solve(in)
	if r, _ := unschedulable(&plan, "default/x"); r != "NodePool primary limits reached (nodes: 2)" {
		t.Errorf("reason = %q", r)
	}
}

func TestSolveTaints(t *testing.T) {
	infra := simplePool(t, "infra", 100, "m6i", "")
	infra.Taints = []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}
	soft := simplePool(t, "soft", 50, "c6i", "")
	soft.Taints = []corev1.Taint{{Key: "cheap", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule}}
	plain := pod("plain", 1000, 1024)
	tolerant := pod("tolerant", 1000, 1024)
	tolerant.Tolerations = []corev1.Toleration{tol("dedicated", "infra", corev1.TaintEffectNoSchedule)}
	for _, c := range []struct {
		pod  Pod
		want string
	}{{plain, "soft"}, {tolerant, "infra"}} { // PreferNoSchedule does not block
		in := Input{Pods: []Pod{c.pod}, NodePools: []NodePool{soft, infra}}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if nc := claimOf(&plan, c.pod.Key()); nc == nil || nc.NodePool != c.want || len(nc.Taints) != 1 {
			t.Errorf("pod %s on %+v, want NodePool %s with its taint", c.pod.Name, nc, c.want)
		}
	}
	// PreferNoSchedule is a preference honoured until relaxed (last, as in
	// Karpenter): the tolerating pod does not join the soft claim of the
	// untolerating pod while the infra pool can take it.
	in := Input{Pods: []Pod{plain, tolerant}, NodePools: []NodePool{soft, infra}}
	plan := Solve(in)
	if len(plan.NewNodeClaims) != 2 || claimOf(&plan, "default/plain").NodePool != "soft" || claimOf(&plan, "default/tolerant").NodePool != "infra" {
		t.Errorf("claims = %+v", plan.NewNodeClaims)
	}

	// NoExecute must be tolerated too; an empty-key Exists toleration tolerates all.
	evict := simplePool(t, "evict", 1, "m6i", "")
	evict.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
	all := pod("all", 1000, 0)
	all.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	in = Input{Pods: []Pod{pod("plain", 1000, 0), all}, NodePools: []NodePool{evict}}
	plan = Solve(in)
	if r, _ := unschedulable(&plan, "default/plain"); r != "incompatible with NodePool evict: untolerated taint maintenance:NoExecute" {
		t.Errorf("reason = %q", r)
	}
	if claimOf(&plan, "default/all") == nil {
		t.Error("pod tolerating everything was not planned")
	}

	// The example pools: a GPU pod without the toleration.
	gpuPod := pod("gpu-no-toleration", 1000, 1024)
	gpuPod.Requests[resources.NvidiaGPU] = 1
	in = Input{Pods: []Pod{gpuPod}, NodePools: examplePools(t)}
	plan = Solve(in)
	r, _ := unschedulable(&plan, "default/gpu-no-toleration")
	for _, want := range []string{
		"incompatible with NodePool gpu: untolerated taint nvidia.com/gpu=true:NoSchedule",
		"NodePool general-purpose: no compatible instance type has enough resources: requests nvidia.com/gpu=1 exceed the largest allocatable (nvidia.com/gpu=0)",
		"incompatible with NodePool memory-optimized: untolerated taint workload-type=memory-intensive:NoSchedule",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("reason %q lacks %q", r, want)
		}
	}
}

func TestSolveDaemonSetOverheadChangesType(t *testing.T) {
	m6i := simplePool(t, "m6i", 1, "m6i", "")
	p := pod("app", 1500, 1024)
	ds := func(name string, cpu int64, sel map[string]string, tols ...corev1.Toleration) DaemonSet {
		return DaemonSet{Namespace: "kube-system", Name: name, Pod: Pod{NodeSelector: sel, Tolerations: tols,
			Requests: resources.List{resources.CPU: cpu, resources.Memory: 64 << 20, resources.Pods: 1}}}
	}
	first := func(in Input) *NewNodeClaim {
		t.Helper()
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if len(plan.NewNodeClaims) != 1 {
			t.Fatalf("plan = %+v", plan)
		}
		return &plan.NewNodeClaims[0]
	}
	if nc := first(Input{Pods: []Pod{p}, NodePools: []NodePool{m6i}}); nc.InstanceTypes[0].Type.Name != "m6i.large" {
		t.Errorf("without daemonsets: %s, want m6i.large (1930m allocatable)", nc.InstanceTypes[0].Type.Name)
	}
	nc := first(Input{Pods: []Pod{p}, NodePools: []NodePool{m6i}, DaemonSets: []DaemonSet{ds("agent", 500, nil)}})
	if nc.InstanceTypes[0].Type.Name != "m6i.xlarge" {
		t.Errorf("with a 500m daemonset: %s, want m6i.xlarge", nc.InstanceTypes[0].Type.Name)
	}
	if want := (resources.List{resources.CPU: 2000, resources.Memory: 1088 << 20, resources.Pods: 2}); nc.Requests != want {
		t.Errorf("claim requests = %s, want %s (pod + daemonset)", nc.Requests, want)
	}
	// A daemonset that selects arm64 nodes, or does not tolerate the pool's
	// taint, never runs on these nodes.
	armOnly := ds("arm-agent", 500, map[string]string{apiv1.LabelArch: "arm64"})
	if nc := first(Input{Pods: []Pod{p}, NodePools: []NodePool{m6i}, DaemonSets: []DaemonSet{armOnly}}); nc.InstanceTypes[0].Type.Name != "m6i.large" {
		t.Errorf("with an arm64-only daemonset: %s, want m6i.large", nc.InstanceTypes[0].Type.Name)
	}
	tainted := m6i
	tainted.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
	tp := p
	tp.Tolerations = []corev1.Toleration{tol("team", "a", corev1.TaintEffectNoSchedule)}
	in := Input{Pods: []Pod{tp}, NodePools: []NodePool{tainted}, DaemonSets: []DaemonSet{ds("agent", 500, nil)}}
	if nc := first(in); nc.InstanceTypes[0].Type.Name != "m6i.large" {
		t.Errorf("with an untolerating daemonset: %s, want m6i.large", nc.InstanceTypes[0].Type.Name)
	}
	in.DaemonSets = append(in.DaemonSets, ds("tolerant", 500, nil, corev1.Toleration{Operator: corev1.TolerationOpExists}))
	if nc := first(in); nc.InstanceTypes[0].Type.Name != "m6i.xlarge" {
		t.Errorf("with a tolerating daemonset: %s, want m6i.xlarge", nc.InstanceTypes[0].Type.Name)
	}
}

func TestSolveHugeAndUnknownPodsDoNotStopOthers(t *testing.T) {
	huge := pod("huge", 1000_000, 1024)
	foo := pod("foo", 100, 0)
	foo.UnknownResources = []string{"example.com/foo"}
	in := Input{Pods: append([]Pod{huge, foo}, pods("web", 5, 1000, 1024)...), NodePools: examplePools(t)}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 2 {
		t.Fatalf("unschedulable = %+v", plan.Unschedulable)
	}
	r, _ := unschedulable(&plan, "default/huge")
	// The largest c/m/r generation>5 type allocatable in general-purpose.
	var largest int64
	for _, p := range in.NodePools {
		for _, o := range p.InstanceTypes {
			largest = max(largest, o.Shape.Allocatable[resources.CPU])
		}
	}
	want := fmt.Sprintf("no instance type in any NodePool has enough resources: requests cpu=1000 exceed the largest allocatable (cpu=%dm)", largest)
	if r != want || largest < 190_000 {
		t.Errorf("reason = %q, want %q", r, want)
	}
	if r, _ := unschedulable(&plan, "default/foo"); r != "requests unknown resource example.com/foo: no instance type offers it" {
		t.Errorf("reason = %q", r)
	}
	for i := 0; i < 5; i++ {
		if claimOf(&plan, in.Pods[2+i].Key()) == nil {
			t.Errorf("pod %s not planned", in.Pods[2+i].Key())
		}
	}
}

func TestSolveExistingNodesFirst(t *testing.T) {
	free := func(cpu int64, pods int64) resources.List {
		return resources.List{resources.CPU: cpu, resources.Memory: 8 << 30, resources.Pods: pods}
	}
	nodes := []Node{
		{Name: "node-c", Labels: map[string]string{apiv1.LabelArch: "amd64"}, Available: free(4000, 10)},
		{Name: "node-b", Labels: map[string]string{apiv1.LabelArch: "amd64"}, Available: free(1500, 10)},
		{Name: "node-a", Labels: map[string]string{apiv1.LabelArch: "amd64"}, Available: free(4000, 10),
			Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}},
		{Name: "node-0", Labels: map[string]string{apiv1.LabelArch: "arm64"}, Available: free(4000, 10)},
	}
	ps := pods("p", 3, 1000, 512)
	for i := range ps {
		ps[i].NodeSelector = map[string]string{apiv1.LabelArch: "amd64"}
	}
	in := Input{Pods: ps, ExistingNodes: nodes, NodePools: []NodePool{simplePool(t, "m6i", 1, "m6i", "")}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	// node-0 has the wrong arch, node-a an untolerated taint; node-b holds
	// one pod, node-c the next two; nothing new is launched.
	want := []Placement{{"default/p-aa", "node-b"}, {"default/p-ab", "node-c"}, {"default/p-ac", "node-c"}}
	if !reflect.DeepEqual(plan.ExistingPlacements, want) || len(plan.NewNodeClaims) != 0 {
		t.Errorf("placements = %v, claims %d; want %v", plan.ExistingPlacements, len(plan.NewNodeClaims), want)
	}
	// Out of pod slots: node-c keeps one slot, so the third pod needs a new node.
	nodes[0].Available[resources.Pods] = 1
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.ExistingPlacements) != 2 || claimOf(&plan, "default/p-ac") == nil {
		t.Errorf("plan = %+v", plan)
	}
}

func TestSolveOfferings(t *testing.T) {
	both := familiesPool(t, "both", "m6i, c6i")
	pinned := pod("pinned", 1000, 1024)
	pinned.NodeSelector = map[string]string{apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1b"}
	anywhere := pod("anywhere", 1000, 1024)
	anywhere.NodeSelector = map[string]string{apiv1.LabelInstanceFamily: "c6i"} // keeps the two pods apart
	pinned.NodeSelector[apiv1.LabelInstanceFamily] = "m6i"
	in := Input{Pods: []Pod{pinned, anywhere}, NodePools: []NodePool{both}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)

	nc := claimOf(&plan, "default/pinned")
	for _, o := range nc.InstanceTypes {
		for _, of := range o.Offerings {
			if of.CapacityType != "on-demand" || of.Zone != "us-east-1b" {
				t.Errorf("pinned pod offered %s %+v", o.Type.Name, of)
			}
		}
	}
	reqs := map[string]string{}
	for _, r := range nc.Requirements {
		reqs[r.Key] = r.Operator + " " + strings.Join(r.Values, ",")
	}
	if reqs[apiv1.LabelZone] != "In us-east-1b" || reqs[apiv1.LabelCapacityType] != "In on-demand" || reqs[apiv1.LabelInstanceFamily] != "In m6i" {
		t.Errorf("requirements = %v", nc.Requirements)
	}
	c6iLarge, _ := catalog.MustDefault().Get("c6i.large")
	nc = claimOf(&plan, "default/anywhere")
	if got := CheapestOffering(nc.InstanceTypes[0].Offerings); nc.InstanceTypes[0].Type.Name != "c6i.large" || got.CapacityType != "spot" || math.Abs(nc.Price()-c6iLarge.SpotPrice()) > 1e-12 {
		t.Errorf("unconstrained pod: %s %+v price %v, want c6i.large spot at %v", nc.InstanceTypes[0].Type.Name, got, nc.Price(), c6iLarge.SpotPrice())
	}

	// Unavailable offerings are never planned: with c6i.large spot gone
	// everywhere, the claim goes on-demand or to another type.
	for i := range both.InstanceTypes {
		o := &both.InstanceTypes[i]
		if o.Type.Name == "c6i.large" {
			offs := append([]catalog.Offering(nil), o.Offerings...)
			for j := range offs {
				if offs[j].CapacityType == "spot" {
					offs[j].Available = false
				}
			}
			o.Offerings = offs
		}
	}
	in = Input{Pods: []Pod{anywhere}, NodePools: []NodePool{both}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	for _, o := range plan.NewNodeClaims[0].InstanceTypes {
		if o.Type.Name == "c6i.large" {
			for _, of := range o.Offerings {
				if of.CapacityType == "spot" {
					t.Errorf("unavailable offering planned: %+v", of)
				}
			}
		}
	}
	if plan.NewNodeClaims[0].Price() <= c6iLarge.SpotPrice() {
		t.Errorf("price %v not above the unavailable offering's %v", plan.NewNodeClaims[0].Price(), c6iLarge.SpotPrice())
	}
}

func TestSolveExoticTypesOnlyWhenNeeded(t *testing.T) {
	// Few enough types that GPU and metal ones are among the cheapest 60.
	anyAMD := familiesPool(t, "any", "m6i, g4dn, g5")
	small := pod("small", 1000, 1024)
	gpu := pod("gpu", 1000, 1024)
	gpu.Requests[resources.NvidiaGPU] = 1
	metal := pod("metal", 1000, 1024)
	metal.NodeSelector = map[string]string{apiv1.LabelInstanceType: "m6i.metal"}
	in := Input{Pods: []Pod{small, gpu, metal}, NodePools: []NodePool{anyAMD}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	// Alone, a 1-cpu pod never causes an exotic node (with the GPU pod it
	// may share the GPU node that is bought anyway).
	alone := Solve(Input{Pods: []Pod{small}, NodePools: []NodePool{anyAMD}})
	for _, o := range alone.NewNodeClaims[0].InstanceTypes {
		if isExotic(o.Type) {
			t.Errorf("1-cpu pod offered exotic %s", o.Type.Name)
		}
	}
	if n := len(alone.NewNodeClaims[0].InstanceTypes); n < 5 {
		t.Errorf("1-cpu pod offered only %d types", n)
	}
	for _, o := range claimOf(&plan, "default/gpu").InstanceTypes {
		if o.Type.GPUCount < 1 || o.Type.GPUManufacturer != "nvidia" {
			t.Errorf("GPU pod offered %s", o.Type.Name)
		}
	}
	if got := typeNames(claimOf(&plan, "default/metal")); !reflect.DeepEqual(got, []string{"m6i.metal"}) {
		t.Errorf("metal pod offered %v", got)
	}
}

func TestSolveRequiredAffinityTermsAreORed(t *testing.T) {
	m6i := simplePool(t, "m6i", 1, "m6i", "")
	either := pod("either", 1000, 1024)
	either.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{
		{{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"arm64"}}},
		{{Key: apiv1.LabelInstanceSize, Operator: apiv1.OpIn, Values: []string{"2xlarge"}}},
	}
	arm := pod("arm", 1000, 1024)
	arm.RequiredAffinity = either.RequiredAffinity[:1]
	empty := pod("empty-term", 1000, 1024)
	empty.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{}}
	in := Input{Pods: []Pod{either, arm, empty}, NodePools: []NodePool{m6i}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := typeNames(claimOf(&plan, "default/either")); !reflect.DeepEqual(got, []string{"m6i.2xlarge"}) {
		t.Errorf("either-term pod offered %v, want [m6i.2xlarge]", got)
	}
	if r, _ := unschedulable(&plan, "default/arm"); r != "incompatible with NodePool m6i: no instance type or offering meets requirement kubernetes.io/arch In [arm64]" {
		t.Errorf("reason = %q", r)
	}
	if r, _ := unschedulable(&plan, "default/empty-term"); !strings.Contains(r, "empty required node-affinity term") {
		t.Errorf("reason = %q", r)
	}
}

func TestSolveLabelsFromPoolRequirementsAndTemplate(t *testing.T) {
	teams := poolYAML(t, `
metadata: {name: teams}
spec:
  template:
    metadata: {labels: {env: prod}}
    spec:
      `+nodeClassRef+`
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: team, operator: In, values: [a, b]}
`)
	sel := func(name string, kv ...string) Pod {
		p := pod(name, 1000, 1024)
		p.NodeSelector = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.NodeSelector[kv[i]] = kv[i+1]
		}
		return p
	}
	in := Input{NodePools: []NodePool{teams}, Pods: []Pod{
		sel("team-a", "team", "a"), sel("team-b", "team", "b"), sel("team-c", "team", "c"),
		sel("prod", "env", "prod"), sel("dev", "env", "dev"), sel("undefined", "foo", "bar"),
		sel("by-pool", apiv1.LabelNodePool, "teams"),
	}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	for _, name := range []string{"team-a", "team-b", "prod", "by-pool"} {
		if claimOf(&plan, "default/"+name) == nil {
			t.Errorf("pod %s not planned", name)
		}
	}
	for _, name := range []string{"team-c", "dev", "undefined"} {
		if r, ok := unschedulable(&plan, "default/"+name); !ok || !strings.Contains(r, "incompatible with NodePool teams: requirement") {
			t.Errorf("pod %s: %q", name, r)
		}
	}
	a, b := claimOf(&plan, "default/team-a"), claimOf(&plan, "default/team-b")
	if a == b {
		t.Fatal("team a and team b pods share a node")
	}
	found := false
	for _, r := range a.Requirements {
		if r.Key == "team" {
			found = found || (r.Operator == apiv1.OpIn && reflect.DeepEqual(r.Values, []string{"a"}))
		}
	}
	if !found || a.Labels["env"] != "prod" {
		t.Errorf("team-a claim requirements %v labels %v", a.Requirements, a.Labels)
	}
}

// minValuesInput: three 1-CPU pods any family holds and one that only
// m6i holds, on a pool whose family requirement has minValues 3.
func minValuesInput(t *testing.T) Input {
	diverse := poolYAML(t, `
metadata: {name: diverse}
spec:
  template:
    spec:
      `+nodeClassRef+`
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i, m7i, c6i, c7i, r6i], minValues: 3}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`)
	one := pod("one-family", 1000, 1024)
	one.NodeSelector = map[string]string{apiv1.LabelInstanceFamily: "m6i"}
	return Input{Pods: append(pods("p", 3, 1000, 1024), one), NodePools: []NodePool{diverse}}
}

func TestSolveMinValues(t *testing.T) {
	in := minValuesInput(t)
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	for _, nc := range plan.NewNodeClaims {
		fams := map[string]bool{}
		for _, o := range nc.InstanceTypes {
			fams[o.Type.Family] = true
		}
		if len(fams) < 3 {
			t.Errorf("claim %v has families %v, want >= 3", nc.Pods, fams)
		}
	}
	if r, _ := unschedulable(&plan, "default/one-family"); !strings.Contains(r, "minValues") {
		t.Errorf("reason = %q", r)
	}
}

// TestSolvePacksSmallPodsTightly: 50 pods of 1 cpu land on a few nodes
// whose price is near the lower bound (cpu x cheapest USD per allocatable
// cpu); one node per pod would cost far more.
func TestSolvePacksSmallPodsTightly(t *testing.T) {
	gp := poolByName(t, examplePools(t), "general-purpose")
	in := Input{Pods: pods("inflate", 50, 1000, 0), NodePools: []NodePool{gp}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	lower := 50 * 1000 * cheapestUnitPrice(gp, resources.CPU, nil)
	single := Solve(Input{Pods: in.Pods[:1], NodePools: in.NodePools})
	perPod := 50 * single.Price()
	t.Logf("nodes %d, price %.4f, lower bound %.4f, one node per pod %.4f", len(plan.NewNodeClaims), plan.Price(), lower, perPod)
	if len(plan.NewNodeClaims) > 10 || plan.Price() > 1.25*lower {
		t.Errorf("%d nodes at %.4f USD/hour; want <= 10 nodes and <= 1.25 x lower bound %.4f", len(plan.NewNodeClaims), plan.Price(), lower)
	}
	if perPod <= 1.25*lower {
		t.Errorf("bound does not discriminate: one node per pod costs %.4f", perPod)
	}
}

// TestSolveGPUPodsAreNotUpsizedIntoPricierTypes: four 1-GPU pods cost no
// more than four single-GPU nodes (a claim must not grow into a 4-GPU
// p3.8xlarge or g4dn.12xlarge because one exists).
func TestSolveGPUPodsAreNotUpsizedIntoPricierTypes(t *testing.T) {
	gpu := poolByName(t, examplePools(t), "gpu")
	ps := pods("train", 4, 2000, 8192)
	for i := range ps {
		ps[i].Requests[resources.NvidiaGPU] = 1
		ps[i].Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
	}
	g4dn, _ := catalog.MustDefault().Get("g4dn.xlarge")
	// The default search, and the strict upsize rule alone without a cap.
	for _, st := range [][]Strategy{nil, {{VCPUCap: 0, UpsizeTolerance: 0.05}}} {
		in := Input{Pods: ps, NodePools: []NodePool{gpu}, Strategies: st}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if plan.Price() > 4*g4dn.OnDemandPrice+1e-9 {
			t.Errorf("strategies %v: plan costs %.3f USD/hour, more than four g4dn.xlarge (%.3f): %v", st, plan.Price(), 4*g4dn.OnDemandPrice, plan.NewNodeClaims[0].InstanceTypes[0].Type.Name)
		}
	}
}

// TestSolveOnDemandPodDoesNotTurnSpotClaimOnDemand: an on-demand-only pod
// gets its own node instead of forcing a spot claim on-demand.
func TestSolveOnDemandPodDoesNotTurnSpotClaimOnDemand(t *testing.T) {
	both := familiesPool(t, "both", "c6i")
	spot, od := pod("a-any", 1000, 1024), pod("b-on-demand", 1000, 1024)
	od.NodeSelector = map[string]string{apiv1.LabelCapacityType: apiv1.CapacityTypeOnDemand}
	for _, st := range [][]Strategy{nil, {{VCPUCap: 0, UpsizeTolerance: 1}}} {
		in := Input{Pods: []Pod{spot, od}, NodePools: []NodePool{both}, Strategies: st}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		nc := claimOf(&plan, "default/a-any")
		if len(plan.NewNodeClaims) != 2 || CheapestOffering(nc.InstanceTypes[0].Offerings).CapacityType != apiv1.CapacityTypeSpot {
			t.Errorf("strategies %v: %d claims, spot pod's cheapest offering %+v", st, len(plan.NewNodeClaims), CheapestOffering(nc.InstanceTypes[0].Offerings))
		}
	}
}

// TestSolveLimitsHoldAsClaimsGrow: a growing claim's cheapest types get
// bigger, so its counted capacity grows; the pool's limit must still hold
// whichever listed type is launched.
func TestSolveLimitsHoldAsClaimsGrow(t *testing.T) {
	pools := examplePools(t)
	gp := poolByName(t, pools, "general-purpose")
	gp.Limits[resources.CPU] = 40_000
	gp.HasLimit[resources.Memory] = false
	fallback := simplePool(t, "fallback", 1, "c6i", "")
	// Two zones: two claims open while small, then both grow.
	ps := pods("p", 60, 1000, 512)
	for i := range ps {
		ps[i].NodeSelector = map[string]string{apiv1.LabelZone: catalog.DefaultZones[i%2]}
	}
	for _, st := range [][]Strategy{nil, {{VCPUCap: 0, UpsizeTolerance: 1}}} {
		in := Input{Pods: ps, NodePools: []NodePool{gp, fallback}, Strategies: st}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		n := 0
		for _, nc := range plan.NewNodeClaims {
			if nc.NodePool == "general-purpose" {
				n += len(nc.Pods)
			}
		}
		if n < 20 || len(plan.Unschedulable) != 0 {
			t.Errorf("strategies %v: %d pods in general-purpose, unschedulable %v", st, n, plan.Unschedulable)
		}
	}
}

func TestSolveDeterministic(t *testing.T) {
	pools := benchPools(t)
	ps := benchPods(1000)
	nodes := []Node{
		{Name: "n-2", Labels: map[string]string{apiv1.LabelArch: "amd64"}, Available: resources.List{resources.CPU: 3000, resources.Memory: 8 << 30, resources.Pods: 20}},
		{Name: "n-1", Labels: map[string]string{apiv1.LabelArch: "arm64"}, Available: resources.List{resources.CPU: 7000, resources.Memory: 16 << 30, resources.Pods: 20}},
	}
	dss := []DaemonSet{
		{Namespace: "kube-system", Name: "a", Pod: Pod{Requests: resources.List{resources.CPU: 100, resources.Memory: 100 << 20, resources.Pods: 1}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}},
		{Namespace: "kube-system", Name: "b", Pod: Pod{Requests: resources.List{resources.CPU: 50, resources.Pods: 1}}},
	}
	in := Input{Pods: ps, NodePools: pools, ExistingNodes: nodes, DaemonSets: dss}
	a := Solve(in)
	checkPlanInvariants(t, in, &a)
	if b := Solve(in); !reflect.DeepEqual(a, b) {
		t.Fatal("same input, different plans")
	}
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 3; round++ {
		sh := Input{
			Pods:          append([]Pod(nil), ps...),
			NodePools:     append([]NodePool(nil), pools...),
			ExistingNodes: append([]Node(nil), nodes...),
			DaemonSets:    append([]DaemonSet(nil), dss...),
		}
		rng.Shuffle(len(sh.Pods), func(i, j int) { sh.Pods[i], sh.Pods[j] = sh.Pods[j], sh.Pods[i] })
		rng.Shuffle(len(sh.NodePools), func(i, j int) { sh.NodePools[i], sh.NodePools[j] = sh.NodePools[j], sh.NodePools[i] })
		rng.Shuffle(len(sh.ExistingNodes), func(i, j int) { sh.ExistingNodes[i], sh.ExistingNodes[j] = sh.ExistingNodes[j], sh.ExistingNodes[i] })
		rng.Shuffle(len(sh.DaemonSets), func(i, j int) { sh.DaemonSets[i], sh.DaemonSets[j] = sh.DaemonSets[j], sh.DaemonSets[i] })
		for i := range sh.NodePools {
			its := append([]InstanceTypeOption(nil), sh.NodePools[i].InstanceTypes...)
			rng.Shuffle(len(its), func(a, b int) { its[a], its[b] = its[b], its[a] })
			sh.NodePools[i].InstanceTypes = its
		}
		if b := Solve(sh); !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: shuffled input, different plan (%d vs %d claims, %.4f vs %.4f)", round, len(a.NewNodeClaims), len(b.NewNodeClaims), a.Price(), b.Price())
		}
	}
}

// TestSolveMixedBatchFillsNodes: on the benchmark mix (1000 pods of seven
// shapes over the example pools), the general-purpose nodes are nearly full
// in their binding resource and GPU pods get single-GPU nodes.
func TestSolveMixedBatchFillsNodes(t *testing.T) {
	in := Input{Pods: benchPods(1000), NodePools: benchPools(t)}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %+v", plan.Unschedulable[0])
	}
	var req, alloc resources.List
	for _, nc := range plan.NewNodeClaims {
		first := nc.InstanceTypes[0]
		switch nc.NodePool {
		case "general-purpose":
			req, alloc = req.Add(nc.Requests), alloc.Add(first.Shape.Allocatable)
		case "gpu":
			if first.Type.GPUCount != 1 || len(nc.Pods) != 1 {
				t.Errorf("GPU claim %v on %s", nc.Pods, first.Type.Name)
			}
		}
	}
	cpu := float64(req[resources.CPU]) / float64(alloc[resources.CPU])
	mem := float64(req[resources.Memory]) / float64(alloc[resources.Memory])
	t.Logf("%d nodes, %.2f USD/hour; general-purpose cpu %.1f%%, memory %.1f%%", len(plan.NewNodeClaims), plan.Price(), 100*cpu, 100*mem)
	if max(cpu, mem) < 0.9 || len(plan.NewNodeClaims) > 150 {
		t.Errorf("general-purpose nodes %.1f%% cpu / %.1f%% memory full over %d nodes; want >= 90%% and <= 150 nodes", 100*cpu, 100*mem, len(plan.NewNodeClaims))
	}
}

func TestSolveEmptyInputs(t *testing.T) {
	if plan := Solve(Input{}); len(plan.NewNodeClaims)+len(plan.ExistingPlacements)+len(plan.Unschedulable) != 0 {
		t.Errorf("empty input gave %+v", plan)
	}
	plan := Solve(Input{Pods: []Pod{pod("lonely", 100, 0)}})
	if r, _ := unschedulable(&plan, "default/lonely"); r != "no existing node fits and there is no NodePool to launch a node from" {
		t.Errorf("reason = %q", r)
	}
}

func TestSolveLeastLoadedClaimFirst(t *testing.T) {
	m6i := simplePool(t, "m6i", 1, "m6i", "")
	a, b := pod("a", 2000, 1024), pod("b", 2000, 1024)
	a.NodeSelector = map[string]string{apiv1.LabelZone: "us-east-1a"}
	b.NodeSelector = map[string]string{apiv1.LabelZone: "us-east-1b"}
	c, d, e := pod("c", 500, 256), pod("d", 500, 256), pod("e", 500, 256)
	in := Input{Pods: []Pod{e, d, c, b, a}, NodePools: []NodePool{m6i},
		Strategies: []Strategy{{VCPUCap: 0, UpsizeTolerance: 0.05}}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	// a and b open one claim each (zones differ); c goes to the older of two
	// equally loaded claims, d to the then less loaded one, e to the older.
	want := [][]string{{"default/a", "default/c", "default/e"}, {"default/b", "default/d"}}
	var got [][]string
	for _, nc := range plan.NewNodeClaims {
		got = append(got, nc.Pods)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims = %v, want %v", got, want)
	}
}
