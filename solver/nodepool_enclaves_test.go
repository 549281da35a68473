package solver

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A class enabling Nitro Enclaves gives its pools only the types that
// support them (Karpenter's nitroEnclavesCompatibility); enabled false
// narrows nothing; a pod lands on the cheapest type that can honour it.
func TestNodePoolKeepsToNitroEnclavesTypes(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "enclaves"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelCapacityType,
		Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}}}
	cat := catalog.MustDefault()
	class := func(v bool) *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{EnclaveOptions: &apiv1.EnclaveOptions{Enabled: &v}}}
	}
	all := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
	if off := NodePoolFromAPI(np, class(false), cat, catalog.DefaultZones, nil); len(off.InstanceTypes) != len(all.InstanceTypes) {
		t.Errorf("disabled: %d types, want all %d", len(off.InstanceTypes), len(all.InstanceTypes))
	}
	on := NodePoolFromAPI(np, class(true), cat, catalog.DefaultZones, nil)
	if len(on.InstanceTypes) < 300 || len(on.InstanceTypes) >= len(all.InstanceTypes) {
		t.Fatalf("enabled: %d types of %d", len(on.InstanceTypes), len(all.InstanceTypes))
	}
	for _, o := range on.InstanceTypes {
		if !o.Type.NitroEnclaves {
			t.Errorf("enabled: %s planned, it does not support Nitro Enclaves", o.Type.Name)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "enclave", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	plan := Solve(Input{Pods: []Pod{PodFromK8s(pod)}, NodePools: []NodePool{on}})
	if len(plan.NewNodeClaims) != 1 {
		t.Fatalf("plan %+v: want one node", plan)
	}
	for _, o := range plan.NewNodeClaims[0].InstanceTypes {
		if !o.Type.NitroEnclaves || o.Type.VCPU < 2 {
			t.Errorf("NodeClaim type %s (Nitro Enclaves %v)", o.Type.Name, o.Type.NitroEnclaves)
		}
	}
}

// A pool allowing only types without Nitro Enclaves support, under a class
// that enables them, plans nothing: the pod stays pending with the
// solver's reason.
func TestNodePoolWithoutEnclaveTypesLeavesPodPending(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "enclaves"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceType,
		Operator: apiv1.OpIn, Values: []string{"t3.xlarge", "m5.large"}}}
	on := true
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{EnclaveOptions: &apiv1.EnclaveOptions{Enabled: &on}}}
	pool := NodePoolFromAPI(np, cls, catalog.MustDefault(), catalog.DefaultZones, nil)
	if len(pool.InstanceTypes) != 0 {
		t.Fatalf("%d types planned, want none", len(pool.InstanceTypes))
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "enclave", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	plan := Solve(Input{Pods: []Pod{PodFromK8s(pod)}, NodePools: []NodePool{pool}})
	if len(plan.NewNodeClaims) != 0 || len(plan.Unschedulable) != 1 ||
		!strings.HasPrefix(plan.Unschedulable[0].Reason, "no instance type in any NodePool has enough resources") {
		t.Fatalf("plan %+v: want the pod unschedulable, no type left", plan)
	}
}
