package solver

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// synth is a synthetic instance type given by its allocatable resources.
type synth struct {
	name   string
	cpu    int64 // allocatable millicores
	memMiB int64 // allocatable MiB
	price  float64
	arch   string
}

var testZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// synthPool is a NodePool whose types have exactly the given allocatable
// (capacity equal to it, 110 pods, 20Gi storage, 26 EBS volumes: a Nitro
// type's), on-demand in three zones.
func synthPool(name string, weight int32, types ...synth) NodePool {
	np := NodePool{Name: name, Weight: weight, NodesLimit: -1}
	for _, s := range types {
		arch := s.arch
		if arch == "" {
			arch = "amd64"
		}
		it := &catalog.InstanceType{Name: s.name, Family: "syn", Category: "s", Generation: 1, Size: s.name, Arch: arch,
			VCPU: int((s.cpu + 999) / 1000), MemoryMiB: s.memMiB, OnDemandPrice: s.price, MaxPods: 110}
		var a resources.List
		a[resources.CPU], a[resources.Memory], a[resources.Pods], a[resources.EphemeralStorage] = s.cpu, s.memMiB<<20, 110, 20<<30
		a[resources.EBSVolumes] = it.EBSVolumeLimit(0, 1)
		opt := InstanceTypeOption{Type: it, Shape: catalog.NodeShape{Capacity: a, Allocatable: a}}
		for _, z := range testZones {
			opt.Offerings = append(opt.Offerings, catalog.Offering{Zone: z, CapacityType: apiv1.CapacityTypeOnDemand, Price: s.price, Available: true})
		}
		np.InstanceTypes = append(np.InstanceTypes, opt)
	}
	return np
}

func cpuMem(cpu, mem string) corev1.ResourceList { return rl("cpu", cpu, "memory", mem) }

func k8sPod(name string, c ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PodSpec{Containers: c}}
}

func onlyClaim(t *testing.T, plan *Plan) *NewNodeClaim {
	t.Helper()
	if len(plan.NewNodeClaims) != 1 || len(plan.Unschedulable) != 0 {
		t.Fatalf("want exactly one NodeClaim and nothing unschedulable, got %d claims, unschedulable %+v", len(plan.NewNodeClaims), plan.Unschedulable)
	}
	return &plan.NewNodeClaims[0]
}

// Case 1: a DaemonSet with only limits counts its limits as requests.
func TestFieldCase1DaemonSetLimitsOnly(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent"}}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Limits: cpuMem("1", "1Gi")}}}
	d := DaemonSetFromK8s(ds)
	if d.Pod.Requests[resources.CPU] != 1000 || d.Pod.Requests[resources.Memory] != 1<<30 {
		t.Fatalf("daemonset requests = %s, want cpu 1000m memory 1Gi", d.Pod.Requests)
	}
	pool := synthPool("p", 0, synth{name: "small", cpu: 2000, memMiB: 4096, price: 0.05}, synth{name: "medium", cpu: 4000, memMiB: 8192, price: 0.10})
	in := Input{Pods: []Pod{pod("app", 1500, 2048)}, NodePools: []NodePool{pool}, DaemonSets: []DaemonSet{d}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	nc := onlyClaim(t, &plan)
	if nc.InstanceTypes[0].Type.Name != "medium" || plan.Price() != 0.10 {
		t.Errorf("first type %s at %v $/h, want medium at 0.10", nc.InstanceTypes[0].Type.Name, plan.Price())
	}
	if nc.Requests[resources.CPU] != 2500 {
		t.Errorf("claim requests cpu = %d, want 2500 (pod 1500 + daemonset 1000)", nc.Requests[resources.CPU])
	}
}

// Case 2: DaemonSet node affinity with two ORed terms counts when either matches.
func TestFieldCase2DaemonSetOredAffinity(t *testing.T) {
	red := []apiv1.NodeSelectorRequirementWithMinValues{{Key: "tier", Operator: apiv1.OpIn, Values: []string{"red"}}}
	blue := []apiv1.NodeSelectorRequirementWithMinValues{{Key: "tier", Operator: apiv1.OpIn, Values: []string{"blue"}}}
	for _, terms := range [][][]apiv1.NodeSelectorRequirementWithMinValues{{red, blue}, {blue, red}} {
		pool := synthPool("p", 0, synth{name: "small", cpu: 2000, memMiB: 2048, price: 0.05}, synth{name: "medium", cpu: 4000, memMiB: 4096, price: 0.10})
		pool.Labels = map[string]string{"tier": "blue"}
		ds := DaemonSet{Namespace: "kube-system", Name: "agent", Pod: Pod{Requests: resources.List{resources.CPU: 2000, resources.Memory: 2 << 30, resources.Pods: 1}, RequiredAffinity: terms}}
		in := Input{Pods: []Pod{pod("app", 1000, 1024)}, NodePools: []NodePool{pool}, DaemonSets: []DaemonSet{ds}}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if nc := onlyClaim(t, &plan); nc.InstanceTypes[0].Type.Name != "medium" {
			t.Errorf("terms %v: first type %s, want medium", terms, nc.InstanceTypes[0].Type.Name)
		}
	}
}

// Case 3: host ports against DaemonSets.
func TestFieldCase3HostPortVsDaemonSet(t *testing.T) {
	pool := synthPool("p", 0, synth{name: "small", cpu: 2000, memMiB: 4096, price: 0.05}, synth{name: "big", cpu: 8000, memMiB: 16384, price: 0.20})
	app := pod("app", 500, 512)
	app.HostPorts = []HostPort{{Port: 8080}}
	dsPod := Pod{Requests: resources.List{resources.CPU: 100, resources.Memory: 64 << 20, resources.Pods: 1}, HostPorts: []HostPort{{Protocol: "TCP", Port: 8080}}}
	in := Input{Pods: []Pod{app}, NodePools: []NodePool{pool}, DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "proxy", Pod: dsPod}}}
	plan := Solve(in)
	if len(plan.NewNodeClaims) != 0 {
		t.Fatalf("planned %d NodeClaims, want none", len(plan.NewNodeClaims))
	}
	if r, ok := unschedulable(&plan, "default/app"); !ok || !strings.Contains(r, "host port 8080/TCP") {
		t.Errorf("reason = %q, want a host-port reason", r)
	}
	// The DaemonSet only runs on the big type: one small node.
	dsPod.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"big"}}}}
	in.DaemonSets = []DaemonSet{{Namespace: "kube-system", Name: "proxy", Pod: dsPod}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	nc := onlyClaim(t, &plan)
	if names := typeNames(nc); len(names) != 1 || names[0] != "small" {
		t.Errorf("types %v, want [small]", names)
	}
	// Two pods with the same host port never share a node.
	b := pod("app2", 500, 512)
	b.HostPorts = []HostPort{{Port: 8080, IP: "0.0.0.0"}}
	in.Pods = []Pod{app, b}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 2 {
		t.Errorf("%d claims for two pods on host port 8080, want 2", len(plan.NewNodeClaims))
	}
}

// Case 4: pod overhead counts.
func TestFieldCase4PodOverhead(t *testing.T) {
	kp := k8sPod("app", corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpuMem("1700m", "1Gi")}})
	kp.Spec.Overhead = cpuMem("500m", "512Mi")
	p := PodFromK8s(kp)
	if p.Requests[resources.CPU] != 2200 || p.Requests[resources.Memory] != 1536<<20 {
		t.Fatalf("effective requests %s, want 2200m / 1536Mi", p.Requests)
	}
	node := Node{Name: "empty-2cpu", Labels: map[string]string{apiv1.LabelZone: "us-east-1a"},
		Available: resources.List{resources.CPU: 2000, resources.Memory: 8 << 30, resources.Pods: 110}}
	pool := synthPool("p", 0, synth{name: "c2", cpu: 2000, memMiB: 8192, price: 0.05}, synth{name: "c4", cpu: 4000, memMiB: 8192, price: 0.10})
	in := Input{Pods: []Pod{p}, NodePools: []NodePool{pool}, ExistingNodes: []Node{node}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.ExistingPlacements) != 0 {
		t.Errorf("placed on the 2 CPU node: %+v", plan.ExistingPlacements)
	}
	if nc := onlyClaim(t, &plan); nc.InstanceTypes[0].Type.Name != "c4" {
		t.Errorf("launched %s, want the 4 CPU type", nc.InstanceTypes[0].Type.Name)
	}
}

// Case 5: native sidecar + init container rule.
func TestFieldCase5SidecarInit(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	kp := k8sPod("app", corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{Requests: cpuMem("1500m", "2Gi")}})
	kp.Spec.InitContainers = []corev1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: cpuMem("1", "1Gi")}},
		{Name: "init", Resources: corev1.ResourceRequirements{Requests: cpuMem("2", "512Mi")}},
	}
	p := PodFromK8s(kp)
	if p.Requests[resources.CPU] != 3000 || p.Requests[resources.Memory] != 3<<30 {
		t.Errorf("effective requests %s, want 3 CPU / 3Gi", p.Requests)
	}
}

// Case 6: ephemeral storage against the NodeClass root volume.
func TestFieldCase6EphemeralStorage(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m5.large", "m5.xlarge"}}}
	p := pod("scratch", 500, 512)
	p.Requests[resources.EphemeralStorage] = 47 << 30
	for _, c := range []struct {
		gib   int64
		nodes int
	}{{50, 0}, {60, 1}} {
		size := resource.MustParse(fmt.Sprintf("%dGi", c.gib))
		nc := &apiv1.EC2NodeClass{}
		nc.Spec.BlockDeviceMappings = []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda", RootVolume: true, EBS: &apiv1.EBS{VolumeSize: &size}}}
		pool := NodePoolFromAPI(np, nc, catalog.MustDefault(), catalog.DefaultZones, nil)
		in := Input{Pods: []Pod{p}, NodePools: []NodePool{pool}}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if len(plan.NewNodeClaims) != c.nodes {
			t.Errorf("root %dGi: %d claims, want %d", c.gib, len(plan.NewNodeClaims), c.nodes)
		}
		if c.nodes == 0 {
			want := "ephemeral-storage=47Gi exceed the largest allocatable (ephemeral-storage=44Gi)"
			if r, _ := unschedulable(&plan, p.Key()); !strings.Contains(r, want) {
				t.Errorf("reason %q, want it to contain %q", r, want)
			}
		}
	}
}

// Case 7: kubelet maxPods drives kube-reserved memory on Bottlerocket; on
// AL2023 and AL2 the node agent reserves for the ENI max pods whatever
// maxPods says (Karpenter's UsesENILimitedMemoryOverhead).
func TestFieldCase7MaxPodsKubeReserved(t *testing.T) {
	// MemoryMiB 11624 leaves 10752Mi after the 7.5% VM overhead.
	small := &catalog.InstanceType{Name: "x.xlarge", Family: "x", Category: "x", Generation: 1, Size: "xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 11624, MaxPods: 58, OnDemandPrice: 0.2}
	big := &catalog.InstanceType{Name: "x.2xlarge", Family: "x", Category: "x", Generation: 1, Size: "2xlarge", Arch: "amd64", VCPU: 8, MemoryMiB: 23248, MaxPods: 58, OnDemandPrice: 0.4}
	cat := catalog.New([]*catalog.InstanceType{small, big})
	mp := intstr.FromInt32(110)
	nc := &apiv1.EC2NodeClass{}
	nc.Spec.AMIFamily = apiv1.AMIFamilyBottlerocket
	nc.Spec.Kubelet = &apiv1.KubeletConfiguration{MaxPods: &mp}
	sh := small.ShapeOf(catalog.LaunchOf(&nc.Spec))
	if got := sh.Allocatable[resources.Memory] >> 20; got != 9187 {
		t.Fatalf("allocatable memory %dMi, want 9187Mi (10752 - (11*110+255) - 100)", got)
	}
	if got := small.Shape(nc.Spec.Kubelet, 20<<30).Allocatable[resources.Memory] >> 20; got != 9759 {
		t.Fatalf("AL2023, ENI-based allocatable %dMi, want 9759Mi (10752 - (11*58+255) - 100)", got)
	}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	pool := NodePoolFromAPI(np, nc, cat, catalog.DefaultZones, nil)
	in := Input{Pods: []Pod{pod("big-mem", 1000, 9500)}, NodePools: []NodePool{pool}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if n := typeNames(onlyClaim(t, &plan)); len(n) != 1 || n[0] != "x.2xlarge" {
		t.Errorf("types %v, want [x.2xlarge]", n)
	}
}

// Case 8: an amd64 pool never yields arm64 types, even when cheaper.
func TestFieldCase8ArchLimited(t *testing.T) {
	pool := poolYAML(t, `
metadata: {name: amd}
spec:
  template:
    spec:
      `+nodeClassRef+`
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i, m6g, c6i, c6g]}
`)
	in := Input{Pods: pods("w", 20, 1000, 2048), NodePools: []NodePool{pool}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	m6g, _ := catalog.MustDefault().Get("m6g.large")
	m6i, _ := catalog.MustDefault().Get("m6i.large")
	if m6g.OnDemandPrice >= m6i.OnDemandPrice {
		t.Fatalf("premise: arm64 m6g.large %v should be cheaper than m6i.large %v", m6g.OnDemandPrice, m6i.OnDemandPrice)
	}
	if len(plan.NewNodeClaims) == 0 {
		t.Fatal("no claims")
	}
	for _, nc := range plan.NewNodeClaims {
		for _, o := range nc.InstanceTypes {
			if o.Type.Arch != "amd64" {
				t.Errorf("claim offers %s (%s)", o.Type.Name, o.Type.Arch)
			}
		}
	}
}

// Case 9: node-count limit with anti-affinity; cpu limit equal to a node.
func TestFieldCase9Limits(t *testing.T) {
	pool := synthPool("p", 0, synth{name: "c4", cpu: 4000, memMiB: 8192, price: 0.1})
	pool.NodesLimit = 3
	var ps []Pod
	for _, p := range pods("web", 5, 500, 512) {
		p.Labels = map[string]string{"app": "web"}
		p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: apiv1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}
		ps = append(ps, p)
	}
	in := Input{Pods: ps, NodePools: []NodePool{pool}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 3 || len(plan.Unschedulable) != 2 {
		t.Errorf("%d claims, %d unschedulable; want 3 and 2", len(plan.NewNodeClaims), len(plan.Unschedulable))
	}
	for _, u := range plan.Unschedulable {
		if !strings.Contains(u.Reason, "limits reached (nodes: 3)") {
			t.Errorf("reason %q", u.Reason)
		}
	}
	// One node already in flight: only two more.
	pool.NodeCount = 1
	in.NodePools = []NodePool{pool}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 2 {
		t.Errorf("with one in-flight node: %d claims, want 2", len(plan.NewNodeClaims))
	}
	// cpu limit 16 admits exactly one 16 vCPU node.
	cpuPool := synthPool("cpu", 0, synth{name: "c16", cpu: 16000, memMiB: 32768, price: 0.8})
	cpuPool.HasLimit[resources.CPU], cpuPool.Limits[resources.CPU] = true, 16000
	in = Input{Pods: []Pod{pod("a", 15000, 1024), pod("b", 15000, 1024)}, NodePools: []NodePool{cpuPool}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 1 || len(plan.Unschedulable) != 1 {
		t.Errorf("cpu limit 16: %d claims, %d unschedulable; want 1 and 1", len(plan.NewNodeClaims), len(plan.Unschedulable))
	}
}

// Case 10: weight is strict priority among pools that can take the pod.
func TestFieldCase10Weights(t *testing.T) {
	pools := []NodePool{
		synthPool("w10", 10, synth{name: "m245", cpu: 32000, memMiB: 245 << 10, price: 2}),
		synthPool("w30", 30, synth{name: "m60", cpu: 8000, memMiB: 60 << 10, price: 0.5}),
		synthPool("w20", 20, synth{name: "m120", cpu: 16000, memMiB: 120 << 10, price: 1}),
	}
	in := Input{Pods: []Pod{pod("big", 1000, 64<<10)}, NodePools: pools}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if nc := onlyClaim(t, &plan); nc.NodePool != "w20" {
		t.Errorf("pool %s, want w20", nc.NodePool)
	}
}

// Case 11: a dedicated pool is never used by pods without its toleration.
func TestFieldCase11DedicatedTaint(t *testing.T) {
	batch := synthPool("batch", 100, synth{name: "c4", cpu: 4000, memMiB: 8192, price: 0.01})
	batch.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	general := synthPool("general", 0, synth{name: "c8", cpu: 8000, memMiB: 16384, price: 0.5})
	plain := pod("plain", 1000, 1024)
	in := Input{Pods: []Pod{plain}, NodePools: []NodePool{batch, general}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if nc := onlyClaim(t, &plan); nc.NodePool != "general" {
		t.Errorf("pool %s, want general", nc.NodePool)
	}
	in.NodePools = []NodePool{batch}
	plan = Solve(in)
	if r, _ := unschedulable(&plan, plain.Key()); r != "incompatible with NodePool batch: untolerated taint dedicated=batch:NoSchedule" {
		t.Errorf("reason %q", r)
	}
	tolerant := pod("tolerant", 1000, 1024)
	tolerant.Tolerations = []corev1.Toleration{tol("dedicated", "batch", corev1.TaintEffectNoSchedule)}
	in.Pods = []Pod{tolerant}
	plan = Solve(in)
	if nc := onlyClaim(t, &plan); nc.NodePool != "batch" {
		t.Errorf("tolerating pod in %s", nc.NodePool)
	}
}

// A class's ipPrefixCount leaves out the types EC2 would refuse it on: an
// interface with fewer address slots than the prefixes plus the primary
// address (t3.small: 4), a Xen type (m4.large); 0 or none leaves all in.
func TestFieldCaseIPPrefixCountLeavesOutTypesThatCannotTakeIt(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn,
		Values: []string{"t3.small", "m4.large", "m5.large"}}}
	zero, four := int32(0), int32(4)
	for _, c := range []struct {
		count *int32
		want  []string
	}{{nil, []string{"m4.large", "m5.large", "t3.small"}}, {&zero, []string{"m4.large", "m5.large", "t3.small"}}, {&four, []string{"m5.large"}}} {
		nc := &apiv1.EC2NodeClass{}
		nc.Spec.IPPrefixCount = c.count
		pool := NodePoolFromAPI(np, nc, catalog.MustDefault(), catalog.DefaultZones, nil)
		var got []string
		for _, o := range pool.InstanceTypes {
			got = append(got, o.Type.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("ipPrefixCount %v: types %v, want %v", c.count, got, c.want)
		}
	}
}
