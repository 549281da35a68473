package solver

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A class enabling nested virtualization gives its pools only the types
// that support it, as Karpenter's compatibility check drops the others
// before scheduling; "disabled" narrows nothing; a pod then lands on the
// cheapest type that can honour the class.
func TestNodePoolKeepsToNestedVirtualizationTypes(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "nested"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelCapacityType,
		Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}}}
	cat := catalog.MustDefault()
	class := func(v string) *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{CPUOptions: &apiv1.CPUOptions{NestedVirtualization: &v}}}
	}
	all := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
	if off := NodePoolFromAPI(np, class(apiv1.NestedVirtualizationDisabled), cat, catalog.DefaultZones, nil); len(off.InstanceTypes) != len(all.InstanceTypes) {
		t.Errorf("disabled: %d types, want all %d", len(off.InstanceTypes), len(all.InstanceTypes))
	}
	on := NodePoolFromAPI(np, class(apiv1.NestedVirtualizationEnabled), cat, catalog.DefaultZones, nil)
	if len(on.InstanceTypes) < 30 {
		t.Fatalf("enabled: %d types", len(on.InstanceTypes))
	}
	for _, o := range on.InstanceTypes {
		if !o.Type.NestedVirtualization {
			t.Errorf("enabled: %s planned, it does not support nested virtualization", o.Type.Name)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	plan := Solve(Input{Pods: []Pod{PodFromK8s(pod)}, NodePools: []NodePool{on}})
	if len(plan.NewNodeClaims) != 1 {
		t.Fatalf("plan %+v: want one node", plan)
	}
	for _, o := range plan.NewNodeClaims[0].InstanceTypes {
		if !o.Type.NestedVirtualization || o.Shape.Allocatable[resources.CPU] < 1000 {
			t.Errorf("NodeClaim type %s (nested virtualization %v)", o.Type.Name, o.Type.NestedVirtualization)
		}
	}
}
