package headroom

import (
	"strings"
	"testing"

	"github.com/joinery/joinery/api/capacitybuffer"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func i32(v int32) *int32 { return &v }

func tmpl(cpu, mem string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"kubernetes.io/arch": "amd64"},
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}},
		Volumes:                   []corev1.Volume{{Name: "data"}},
	}}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		spec capacitybuffer.Spec
		want string
	}{
		{capacitybuffer.Spec{Replicas: i32(1)}, "spec: one of podTemplateRef and scalableRef"},
		{capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "t"}, ScalableRef: &capacitybuffer.ScalableRef{Kind: "Deployment", Name: "d"}}, "exclusive"},
		{capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "t"}}, "spec.replicas: with podTemplateRef"},
		{capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "t"}, Replicas: i32(-1)}, "spec.replicas: -1 is negative"},
		{capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "t"}, Replicas: i32(1), Percentage: i32(5)}, "spec.percentage: only applies with scalableRef"},
		{capacitybuffer.Spec{ScalableRef: &capacitybuffer.ScalableRef{Kind: "Job", Name: "j"}}, `spec.scalableRef.kind: "Job" is not supported`},
		{capacitybuffer.Spec{ScalableRef: &capacitybuffer.ScalableRef{APIGroup: "batch", Kind: "Deployment", Name: "j"}}, `spec.scalableRef.apiGroup: "batch"`},
		{capacitybuffer.Spec{ScalableRef: &capacitybuffer.ScalableRef{Kind: "Deployment", Name: "d"}, ProvisioningStrategy: new("x/y")}, `spec.provisioningStrategy: "x/y" is not handled`},
		{capacitybuffer.Spec{ScalableRef: &capacitybuffer.ScalableRef{Kind: "Deployment", Name: "d"}, Limits: corev1.ResourceList{"cpu": resource.MustParse("-1")}}, "spec.limits.cpu: -1 is negative"},
	}
	for _, c := range cases {
		err := Validate(&capacitybuffer.CapacityBuffer{Spec: c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	ok := &capacitybuffer.CapacityBuffer{Spec: capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "t"}, Replicas: i32(10)}}
	if err := Validate(ok); err != nil {
		t.Fatal(err)
	}
}

func TestReplicasUpstreamRule(t *testing.T) {
	src := Source{Template: tmpl("1", "1Gi"), ScalableReplicas: 15}
	scal := &capacitybuffer.ScalableRef{Kind: "Deployment", Name: "d"}
	cases := []struct {
		name string
		spec capacitybuffer.Spec
		want int32
	}{
		{"replicas", capacitybuffer.Spec{Replicas: i32(10)}, 10},
		{"percentage rounds up", capacitybuffer.Spec{ScalableRef: scal, Percentage: i32(10)}, 2},
		{"max of replicas and percentage", capacitybuffer.Spec{ScalableRef: scal, Percentage: i32(50), Replicas: i32(3)}, 8},
		{"limits cap", capacitybuffer.Spec{Replicas: i32(10), Limits: corev1.ResourceList{"cpu": resource.MustParse("4500m")}}, 4},
		{"limits alone", capacitybuffer.Spec{Limits: corev1.ResourceList{"memory": resource.MustParse("6Gi"), "cpu": resource.MustParse("100")}}, 6},
		{"limits on an unrequested resource", capacitybuffer.Spec{Replicas: i32(2), Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}, 2},
		{"capped", capacitybuffer.Spec{Replicas: i32(1 << 20)}, MaxReplicas},
	}
	for _, c := range cases {
		if got := Replicas(c.spec, src); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestVirtualPods(t *testing.T) {
	pods := VirtualPods("ns", "web", tmpl("1", "1Gi"), 3)
	if len(pods) != 3 {
		t.Fatalf("%d pods", len(pods))
	}
	p := pods[2]
	if p.Name != "capacitybuffer-web-2" || !IsVirtual(p) || *p.Spec.Priority != VirtualPriority || p.Labels[LabelBufferName] != "web" ||
		p.Spec.Volumes != nil || p.Spec.TopologySpreadConstraints != nil || p.Spec.NodeSelector["kubernetes.io/arch"] != "amd64" {
		t.Fatalf("%+v", p)
	}
	if got := ChunkRequests(p.Spec); got[resources.CPU] != 1000 || got[resources.Memory] != 1<<30 {
		t.Fatalf("requests %v", got)
	}
	if b := BufferOf("ns/" + p.Name); b != "ns/web" {
		t.Fatalf("BufferOf %q", b)
	}
	if b := BufferOf("ns/web-1"); b != "" {
		t.Fatalf("BufferOf a real pod: %q", b)
	}
}

func TestPoolHeadroom(t *testing.T) {
	for _, bad := range []string{"10", "0%", "101%", "x%", "-5%", ""} {
		if _, err := ParsePoolHeadroom(bad); err == nil || !strings.Contains(err.Error(), AnnotationPoolHeadroom) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if n, err := ParsePoolHeadroom(" 10% "); err != nil || n != 10 {
		t.Fatalf("%d %v", n, err)
	}
	var reqs []resources.List
	for i := range 15 {
		var r resources.List
		r[resources.CPU], r[resources.Memory], r[resources.Pods] = 1000+int64(i%2)*1000, 1<<30, 1
		reqs = append(reqs, r)
	}
	pods := PoolVirtualPods("general", 10, reqs)
	if len(pods) != 2 { // ceil(1.5)
		t.Fatalf("%d pods", len(pods))
	}
	got := ChunkRequests(pods[0].Spec)
	if got[resources.CPU] != 1467 || got[resources.Memory] != 1<<30 || pods[0].Spec.NodeSelector["karpenter.sh/nodepool"] != "general" {
		t.Fatalf("%v %v", got, pods[0].Spec.NodeSelector)
	}
	if BufferOf(pods[1].Namespace+"/"+pods[1].Name) != "nodepool/general" {
		t.Fatal(pods[1].Name)
	}
	if PoolVirtualPods("empty", 10, nil) != nil {
		t.Fatal("headroom for an empty pool")
	}
}

func TestTrackerCountsPodsLandedInBufferSpace(t *testing.T) {
	var tr Tracker
	b := "ns/web"
	ten := func(node string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = node
		}
		return out
	}
	tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{b: ten("n1", 10)}, Pods: map[string][]string{"n1": {"d1"}}})
	// 4 real pods bound to n1: 4 virtual pods no longer fit there.
	a := tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{b: ten("n1", 6)}, Pods: map[string][]string{"n1": {"d1", "a", "b", "c", "d"}}})
	if a[b] != (Absorption{Pods: 4, Burst: true}) {
		t.Fatalf("%+v", a)
	}
	// 6 more in the next check: the same burst.
	a = tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{}, Pods: map[string][]string{"n1": {"d1", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}})
	if a[b] != (Absorption{Pods: 6, Burst: false}) || tr.Absorbed(b) != 10 {
		t.Fatalf("%+v %d", a, tr.Absorbed(b))
	}
	// Re-created on a new node (launching while the last pods bound):
	// gains elsewhere do not hide what n1 lost.
	tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{b: ten("n1", 3)}, Pods: map[string][]string{"n1": {"d1"}}})
	a = tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{b: ten("nodeclaim/x", 10)}, Pods: map[string][]string{"n1": {"d1", "y1", "y2", "y3"}}})
	if a[b] != (Absorption{Pods: 3, Burst: true}) || tr.Absorbed(b) != 13 {
		t.Fatalf("with a launch: %+v %d", a, tr.Absorbed(b))
	}
	// Re-created on a new node: nothing absorbed, the burst is over.
	a = tr.Observe(Check{Wanted: map[string]int{b: 10}, Placed: map[string][]string{b: ten("n2", 10)}, Pods: map[string][]string{"n1": {"d1"}, "n2": {}}})
	if len(a) != 0 {
		t.Fatalf("%+v", a)
	}
	// Buffer lowered to 5: not a burst.
	a = tr.Observe(Check{Wanted: map[string]int{b: 5}, Placed: map[string][]string{b: ten("n2", 5)}, Pods: map[string][]string{"n2": {"x"}}})
	if len(a) != 0 {
		t.Fatalf("lowered: %+v", a)
	}
	// Node removed with its buffer (no real pod landed): not a burst.
	a = tr.Observe(Check{Wanted: map[string]int{b: 5}, Placed: map[string][]string{}, Pods: map[string][]string{}})
	if len(a) != 0 {
		t.Fatalf("removed: %+v", a)
	}
}
