package solver

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A class in a cluster placement group gives its pools only the types
// cluster groups take (no burstable, flex or Mac), as Karpenter's
// compatibility check does; a spread group takes them all. Either way the
// pool's nodes carry the group's id label, so a pod selecting it plans
// onto them.
func TestNodePoolKeepsToPlacementGroupTypes(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "hpc"}}
	cat := catalog.MustDefault()
	class := func(strategy string) *apiv1.EC2NodeClass {
		cls := &apiv1.EC2NodeClass{}
		cls.Status.PlacementGroup = &apiv1.PlacementGroupStatus{ID: "pg-0123", Name: "hpc", Strategy: strategy}
		return cls
	}
	all := NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
	spread := NodePoolFromAPI(np, class(apiv1.PlacementStrategySpread), cat, catalog.DefaultZones, nil)
	cluster := NodePoolFromAPI(np, class(apiv1.PlacementStrategyCluster), cat, catalog.DefaultZones, nil)
	if len(spread.InstanceTypes) != len(all.InstanceTypes) || len(cluster.InstanceTypes) >= len(all.InstanceTypes) || len(cluster.InstanceTypes) < 100 {
		t.Fatalf("types: all %d, spread %d, cluster %d", len(all.InstanceTypes), len(spread.InstanceTypes), len(cluster.InstanceTypes))
	}
	for _, o := range cluster.InstanceTypes {
		if o.Type.Category == "t" || !o.Type.SupportsPlacement(catalog.PlacementCluster) {
			t.Errorf("cluster group: %s planned", o.Type.Name)
		}
	}
	if cluster.Labels[apiv1.LabelPlacementGroupID] != "pg-0123" || all.Labels[apiv1.LabelPlacementGroupID] != "" {
		t.Errorf("labels: with a group %v, without %v", cluster.Labels, all.Labels)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mpi", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{apiv1.LabelPlacementGroupID: "pg-0123"},
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	plan := Solve(Input{Pods: []Pod{PodFromK8s(pod)}, NodePools: []NodePool{cluster}})
	if len(plan.NewNodeClaims) != 1 || plan.NewNodeClaims[0].Labels[apiv1.LabelPlacementGroupID] != "pg-0123" {
		t.Fatalf("plan %+v: want one node labelled with the group", plan)
	}
	if plan = Solve(Input{Pods: []Pod{PodFromK8s(pod)}, NodePools: []NodePool{all}}); len(plan.NewNodeClaims) != 0 {
		t.Errorf("a pool without the group planned %d nodes for a pod selecting it", len(plan.NewNodeClaims))
	}
}
