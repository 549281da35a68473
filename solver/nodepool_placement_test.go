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

// A pool whose requirement names the partitions of its class's partition
// group gives each NodeClaim one, so pods spread over partitions
// (topologySpreadConstraints on placement-group-partition) land one per
// partition; the launch then asks EC2 for that partition.
func TestPartitionSpread(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "kafka"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: apiv1.LabelPlacementGroupPartition, Operator: apiv1.OpIn, Values: []string{"1", "2", "3"}},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}}}
	cls := &apiv1.EC2NodeClass{}
	cls.Status.PlacementGroup = &apiv1.PlacementGroupStatus{ID: "pg-1", Strategy: apiv1.PlacementStrategyPartition, PartitionCount: 3}
	pool := NodePoolFromAPI(np, cls, catalog.MustDefault(), catalog.DefaultZones, nil)
	var pods []Pod
	for _, name := range []string{"k0", "k1", "k2"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "kafka"}}, Spec: corev1.PodSpec{
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelPlacementGroupPartition,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kafka"}}}},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1")}}}}}}
		pods = append(pods, PodFromK8s(p))
	}
	plan := Solve(Input{Pods: pods, NodePools: []NodePool{pool}})
	got := map[string]bool{}
	for _, nc := range plan.NewNodeClaims {
		got[nc.Labels[apiv1.LabelPlacementGroupPartition]] = true
	}
	if len(plan.NewNodeClaims) != 3 || !got["1"] || !got["2"] || !got["3"] {
		t.Errorf("%d NodeClaims in partitions %v, want one in each of 1, 2, 3", len(plan.NewNodeClaims), got)
	}
}

// Without a pool requirement, a partition group's partitions are still
// the key's domains (Karpenter puts them in every type's requirements):
// pods spread over them land one per partition; a pod asking for none
// gets a NodeClaim without a partition (EC2 picks it at launch).
func TestPartitionDomainsFromTheGroup(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "kafka"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}}}
	cls := &apiv1.EC2NodeClass{}
	cls.Status.PlacementGroup = &apiv1.PlacementGroupStatus{ID: "pg-1", Strategy: apiv1.PlacementStrategyPartition, PartitionCount: 2}
	pool := NodePoolFromAPI(np, cls, catalog.MustDefault(), catalog.DefaultZones, nil)
	pod := func(name string, spread bool) Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name[:1]}}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("3")}}}}}}
		if spread {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelPlacementGroupPartition,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name[:1]}}}}
		}
		return PodFromK8s(p)
	}
	plan := Solve(Input{Pods: []Pod{pod("k0", true), pod("k1", true)}, NodePools: []NodePool{pool}})
	got := map[string]bool{}
	for _, nc := range plan.NewNodeClaims {
		got[nc.Labels[apiv1.LabelPlacementGroupPartition]] = true
	}
	if len(plan.NewNodeClaims) != 2 || !got["1"] || !got["2"] {
		t.Errorf("spread: %d NodeClaims in partitions %v, want one in 1 and one in 2", len(plan.NewNodeClaims), got)
	}
	plan = Solve(Input{Pods: []Pod{pod("w0", false)}, NodePools: []NodePool{pool}})
	if len(plan.NewNodeClaims) != 1 {
		t.Fatalf("plain pod: %d NodeClaims", len(plan.NewNodeClaims))
	}
	if v, ok := plan.NewNodeClaims[0].Labels[apiv1.LabelPlacementGroupPartition]; ok {
		t.Errorf("a pod asking for no partition got NodeClaim partition %q, want none (EC2 picks)", v)
	}
}
