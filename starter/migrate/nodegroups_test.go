package migrate

import (
	"maps"
	"slices"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// groupNode is a node as EKS managed node groups label it.
func groupNode(name, group, it, zone, capacity, osImage string, extra map[string]string, taints ...corev1.Taint) *corev1.Node {
	l := map[string]string{
		"eks.amazonaws.com/nodegroup": group, "eks.amazonaws.com/capacityType": capacity,
		apiv1.LabelInstanceType: it, apiv1.LabelZone: zone, apiv1.LabelArch: "amd64", apiv1.LabelHostname: name,
		"eks.amazonaws.com/nodegroup-image": "ami-0123", "k8s.io/cloud-provider-aws": "abc",
	}
	maps.Copy(l, extra)
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: osImage}}}
}

func TestNodeGroupsFromTheirNodes(t *testing.T) {
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	nodes := []*corev1.Node{
		groupNode("ip-1", "general", "m5.xlarge", "us-east-1a", "ON_DEMAND", "Amazon Linux 2023.6.20250101", map[string]string{"team": "web", "only-here": "x"}),
		groupNode("ip-2", "general", "m5.2xlarge", "us-east-1b", "ON_DEMAND", "Amazon Linux 2023.6.20250101", map[string]string{"team": "web"},
			corev1.Taint{Key: "ToBeDeletedByClusterAutoscaler", Effect: corev1.TaintEffectNoSchedule}),
		groupNode("ip-3", "gpu_Spot", "g5.xlarge", "us-east-1a", "SPOT", "Bottlerocket OS 1.20.0 (aws-k8s-1.31-nvidia)", nil, gpuTaint,
			corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}),
		{ObjectMeta: metav1.ObjectMeta{Name: "fargate-ip-4", Labels: map[string]string{"eks.amazonaws.com/compute-type": "fargate"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ip-5", Labels: map[string]string{apiv1.LabelNodePool: "default"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ip-6", Labels: map[string]string{apiv1.LabelZone: "us-east-1a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ip-7", Labels: map[string]string{"alpha.eksctl.io/nodegroup-name": "legacy", apiv1.LabelInstanceType: "c5.large"}}},
	}
	groups, ignored := NodeGroups(nodes, nil)
	wantIgnored := []string{"fargate-ip-4: Fargate", "ip-5: already in NodePool default",
		"ip-6: no node group label (eks.amazonaws.com/nodegroup, alpha.eksctl.io/nodegroup-name)"}
	if !slices.Equal(ignored, wantIgnored) {
		t.Errorf("ignored %q, want %q", ignored, wantIgnored)
	}
	if len(groups) != 3 || groups[0].Name != "general" || groups[1].Name != "gpu_Spot" || groups[2].Name != "legacy" {
		t.Fatalf("groups %v", names(groups))
	}
	g := groups[0]
	if !maps.Equal(g.Labels, map[string]string{"team": "web"}) || len(g.Taints) != 0 || g.AMIAlias != "al2023@latest" ||
		!slices.Equal(g.InstanceTypes, []string{"m5.2xlarge", "m5.xlarge"}) || !slices.Equal(g.Families, []string{"m5"}) ||
		!slices.Equal(g.Zones, []string{"us-east-1a", "us-east-1b"}) || !slices.Equal(g.CapacityTypes, []string{"on-demand"}) {
		t.Errorf("general: %+v", g)
	}
	gpu := groups[1]
	if len(gpu.Labels) != 0 || !slices.Equal(gpu.Taints, []corev1.Taint{gpuTaint}) || gpu.AMIAlias != "bottlerocket@latest" ||
		!slices.Equal(gpu.CapacityTypes, []string{"spot"}) {
		t.Errorf("gpu: %+v", gpu)
	}
	if groups[2].Source != "alpha.eksctl.io/nodegroup-name" || !slices.Equal(groups[2].CapacityTypes, []string{"on-demand"}) {
		t.Errorf("legacy: %+v", groups[2])
	}

	p := Propose(groups, "prod-eks")
	var kinds []string
	for _, o := range p.Objects {
		kinds = append(kinds, o["kind"].(string)+"/"+o["metadata"].(map[string]interface{})["name"].(string))
	}
	if want := []string{"EC2NodeClass/al2023", "EC2NodeClass/bottlerocket", "NodePool/general", "NodePool/gpu-spot", "NodePool/legacy"}; !slices.Equal(kinds, want) {
		t.Fatalf("proposal %v, want %v", kinds, want)
	}
	// Each proposed object is a valid v1 object.
	var gpuPool apiv1.NodePool
	for _, o := range p.Objects {
		switch o["kind"] {
		case "NodePool":
			np := &apiv1.NodePool{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o, np, true); err != nil {
				t.Fatal(err)
			}
			if errs := np.Validate(); len(errs) > 0 {
				t.Errorf("NodePool %s: %v", np.Name, errs)
			}
			if np.Name == "gpu-spot" {
				gpuPool = *np
			}
		case "EC2NodeClass":
			nc := &apiv1.EC2NodeClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o, nc, true); err != nil {
				t.Fatal(err)
			}
			if nc.Spec.Role != "KarpenterNodeRole-prod-eks" || nc.Spec.SubnetSelectorTerms[0].Tags["karpenter.sh/discovery"] != "prod-eks" {
				t.Errorf("EC2NodeClass %s: %+v", nc.Name, nc.Spec)
			}
		}
	}
	s := gpuPool.Spec.Template.Spec
	if s.NodeClassRef.Name != "bottlerocket" || !slices.Equal(s.Taints, []corev1.Taint{gpuTaint}) ||
		gpuPool.Spec.Disruption.ConsolidateAfter != CASConsolidateAfter {
		t.Errorf("gpu-spot NodePool %+v", gpuPool.Spec)
	}
	reqs := map[string][]string{}
	for _, r := range s.Requirements {
		reqs[r.Key] = r.Values
	}
	if !slices.Equal(reqs[apiv1.LabelCapacityType], []string{"spot"}) || !slices.Equal(reqs[apiv1.LabelInstanceFamily], []string{"g5"}) ||
		!slices.Equal(reqs[apiv1.LabelZone], []string{"us-east-1a"}) || !slices.Equal(reqs[apiv1.LabelArch], []string{"amd64"}) {
		t.Errorf("gpu-spot requirements %v", reqs)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "KarpenterNodeRole-prod-eks") {
		t.Errorf("notes %q do not say the role is a placeholder", p.Notes)
	}
}

func names(gs []*NodeGroup) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

func TestNodeGroupsByAUserLabel(t *testing.T) {
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"pool": "batch", "eks.amazonaws.com/nodegroup": "ng-1"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "ng-1"}}},
	}
	groups, ignored := NodeGroups(nodes, []string{"pool"})
	if len(groups) != 1 || groups[0].Name != "batch" || len(groups[0].Nodes) != 1 || len(ignored) != 1 || !strings.HasPrefix(ignored[0], "b: no node group label (pool)") {
		t.Fatalf("groups %v, ignored %q", names(groups), ignored)
	}
}
