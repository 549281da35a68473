package solver

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func poolByName(t testing.TB, pools []NodePool, name string) NodePool {
	t.Helper()
	for _, p := range pools {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no NodePool %s", name)
	return NodePool{}
}

func TestNodePoolFromAPIExamples(t *testing.T) {
	pools := examplePools(t)
	gp := poolByName(t, pools, "general-purpose")
	if gp.Weight != 100 || gp.NodesLimit != -1 || !gp.HasLimit[resources.CPU] || !gp.HasLimit[resources.Memory] || gp.HasLimit[resources.Pods] {
		t.Errorf("general-purpose = weight %d nodes %d has %v", gp.Weight, gp.NodesLimit, gp.HasLimit)
	}
	if gp.Limits[resources.CPU] != 1000_000 || gp.Limits[resources.Memory] != 2000<<30 {
		t.Errorf("limits = %s", gp.Limits)
	}
	if len(gp.InstanceTypes) < 300 {
		t.Errorf("general-purpose has only %d types", len(gp.InstanceTypes))
	}
	for _, o := range gp.InstanceTypes {
		it := o.Type
		if !strings.Contains("cmr", it.Category) || it.Generation <= 5 {
			t.Errorf("general-purpose type %s (category %s, generation %d)", it.Name, it.Category, it.Generation)
		}
		if o.Shape.Capacity[resources.EphemeralStorage] != 50<<30 {
			t.Errorf("%s root volume = %d, want 50Gi", it.Name, o.Shape.Capacity[resources.EphemeralStorage])
		}
		if len(o.Offerings) != 6 {
			t.Errorf("%s has %d offerings, want 6 (2 capacity types x 3 zones)", it.Name, len(o.Offerings))
		}
	}

	mem := poolByName(t, pools, "memory-optimized")
	var names []string
	for _, o := range mem.InstanceTypes {
		names = append(names, o.Type.Name)
		for _, of := range o.Offerings {
			if of.CapacityType != apiv1.CapacityTypeOnDemand {
				t.Errorf("memory-optimized offers %+v", of)
			}
		}
	}
	if strings.Join(names, ",") != "r6i.2xlarge,r6i.4xlarge,r6i.xlarge" || len(mem.Taints) != 1 || mem.Weight != 0 {
		t.Errorf("memory-optimized = %v taints %v", names, mem.Taints)
	}

	arm := poolByName(t, pools, "graviton-spot")
	for _, o := range arm.InstanceTypes {
		if o.Type.Arch != "arm64" || !strings.Contains("c7g m7g r7g", o.Type.Family) {
			t.Errorf("graviton-spot type %s", o.Type.Name)
		}
		for _, of := range o.Offerings {
			if of.CapacityType != apiv1.CapacityTypeSpot || of.Price >= o.Type.OnDemandPrice {
				t.Errorf("graviton-spot offering %+v of %s", of, o.Type.Name)
			}
		}
	}

	gpu := poolByName(t, pools, "gpu")
	found4 := false
	for _, o := range gpu.InstanceTypes {
		if o.Type.GPUCount == 0 || o.Shape.Allocatable[resources.NvidiaGPU] != int64(o.Type.GPUCount) {
			t.Errorf("gpu type %s: %d GPUs, allocatable %d", o.Type.Name, o.Type.GPUCount, o.Shape.Allocatable[resources.NvidiaGPU])
		}
		found4 = found4 || o.Type.Name == "g4dn.12xlarge"
	}
	if !found4 {
		t.Error("gpu pool lacks g4dn.12xlarge")
	}
}

func TestNodePoolFromAPIUnavailableOfferingsAndNodesLimit(t *testing.T) {
	np := &apiv1.NodePool{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: small}
spec:
  limits: {nodes: "3", nvidia.com/gpu: "0"}
  template:
    metadata: {labels: {team: a}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large, m6i.xlarge]}
      - {key: topology.kubernetes.io/zone, operator: NotIn, values: [us-east-1c]}
`), np); err != nil {
		t.Fatal(err)
	}
	unavailable := func(it, zone, ct string) bool {
		return it == "m6i.xlarge" || (it == "m6i.large" && zone == "us-east-1a" && ct == apiv1.CapacityTypeSpot)
	}
	p := NodePoolFromAPI(np, nil, catalog.MustDefault(), catalog.DefaultZones, unavailable)
	if p.NodesLimit != 3 || !p.HasLimit[resources.NvidiaGPU] || p.Limits[resources.NvidiaGPU] != 0 || p.Labels["team"] != "a" {
		t.Fatalf("pool = nodes %d has %v limits %s labels %v", p.NodesLimit, p.HasLimit, p.Limits, p.Labels)
	}
	if len(p.InstanceTypes) != 1 || p.InstanceTypes[0].Type.Name != "m6i.large" {
		t.Fatalf("types = %+v, want only m6i.large (every m6i.xlarge offering is unavailable)", p.InstanceTypes)
	}
	offs := p.InstanceTypes[0].Offerings
	if len(offs) != 4 { // zones a and b, two capacity types
		t.Fatalf("offerings = %+v", offs)
	}
	for _, of := range offs {
		if of.Zone == "us-east-1c" {
			t.Errorf("offering in excluded zone: %+v", of)
		}
		want := !(of.Zone == "us-east-1a" && of.CapacityType == apiv1.CapacityTypeSpot)
		if of.Available != want {
			t.Errorf("offering %+v: available %v, want %v", of, of.Available, want)
		}
	}
	// 20 GiB default root volume, EKS default shape.
	if s := p.InstanceTypes[0].Shape; s.Capacity[resources.EphemeralStorage] != 20<<30 || s.Allocatable[resources.CPU] != 1930 {
		t.Errorf("shape = %+v", s)
	}
}

// DaemonSetOverhead counts the DaemonSets a node of each type would run:
// tolerated taints, and node selectors that the type (arch) meets.
func TestDaemonSetOverhead(t *testing.T) {
	cat := catalog.MustDefault()
	np := &apiv1.NodePool{}
	np.Name = "dedicated"
	np.Spec.Template.Spec.Requirements = []req{{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m6i.large", "m6g.large"}}}
	np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	pool := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
	if len(pool.InstanceTypes) != 2 {
		t.Fatalf("types %d", len(pool.InstanceTypes))
	}
	all := DaemonSet{Namespace: "kube-system", Name: "agent", Pod: Pod{
		Requests:    resources.List{resources.CPU: 100, resources.Memory: 100 << 20},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	amd := DaemonSet{Namespace: "kube-system", Name: "amd-only", Pod: Pod{
		Requests:     resources.List{resources.CPU: 50},
		NodeSelector: map[string]string{apiv1.LabelArch: "amd64"},
		Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	untolerated := DaemonSet{Namespace: "kube-system", Name: "plain", Pod: Pod{Requests: resources.List{resources.CPU: 1000}}}
	got := DaemonSetOverhead(pool, []DaemonSet{untolerated, amd, all})
	for i, it := range pool.InstanceTypes {
		want := resources.List{resources.CPU: 100, resources.Memory: 100 << 20, resources.Pods: 1}
		if it.Type.Arch == "amd64" {
			want = resources.List{resources.CPU: 150, resources.Memory: 100 << 20, resources.Pods: 2}
		}
		if got[i] != want {
			t.Errorf("%s: overhead %s, want %s", it.Type.Name, got[i], want)
		}
	}
}
