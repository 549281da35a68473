package activities

import (
	"errors"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A gang's classes carry its group in place of theirs (the stored class
// untouched); a class with its own group is left out, saying why.
func TestGangClassOf(t *testing.T) {
	name := "hpc"
	classes := map[string]*apiv1.EC2NodeClass{
		"gpu": {ObjectMeta: metav1.ObjectMeta{Name: "gpu"}},
		"hpc": {ObjectMeta: metav1.ObjectMeta{Name: "hpc"}, Spec: apiv1.EC2NodeClassSpec{PlacementGroupSelector: &apiv1.PlacementGroupSelector{Name: &name}}},
	}
	classOf := gangClassOf(func(n string) (*apiv1.EC2NodeClass, error) {
		if c, ok := classes[n]; ok {
			return c, nil
		}
		return nil, errors.New("not found")
	}, apiv1.PlacementGroupStatus{ID: "pg-1", Name: "joinery-gang-u-1-prod", Strategy: apiv1.PlacementStrategyCluster})
	got, err := classOf("gpu")
	if err != nil || got.Status.PlacementGroup == nil || got.Status.PlacementGroup.ID != "pg-1" || classes["gpu"].Status.PlacementGroup != nil {
		t.Errorf("gpu: %+v, %v; want the gang's group on a copy", got, err)
	}
	if _, err := classOf("hpc"); err == nil || !strings.Contains(err.Error(), "spec.placementGroupSelector") {
		t.Errorf("hpc: %v; want an error naming spec.placementGroupSelector", err)
	}
	if _, err := classOf("ghost"); err == nil {
		t.Error("ghost: no error")
	}
}

// The gang's pods, as planned into the group: held to its nodes and the
// zone, on copies (the request's pods keep their own selectors).
func TestInGroup(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"accel": "gpu"}}}
	got := inGroup([]*corev1.Pod{p}, "pg-1", "us-east-1b")[0].Spec.NodeSelector
	if len(got) != 3 || got["accel"] != "gpu" || got[apiv1.LabelPlacementGroupID] != "pg-1" || got[apiv1.LabelZone] != "us-east-1b" {
		t.Errorf("selector %v", got)
	}
	if len(p.Spec.NodeSelector) != 1 {
		t.Errorf("the original pod changed: %v", p.Spec.NodeSelector)
	}
	if got := inGroup([]*corev1.Pod{{}}, "pg-1", "")[0].Spec.NodeSelector; len(got) != 1 {
		t.Errorf("no zone: %v", got)
	}
}

func TestPoolZones(t *testing.T) {
	pools := []solver.NodePool{
		{InstanceTypes: []solver.InstanceTypeOption{{Offerings: []catalog.Offering{{Zone: "us-east-1c"}, {Zone: "us-east-1a"}}}}},
		{InstanceTypes: []solver.InstanceTypeOption{{Offerings: []catalog.Offering{{Zone: "us-east-1a"}, {Zone: "us-east-1b"}}}}},
	}
	if got := strings.Join(poolZones(pools), ","); got != "us-east-1a,us-east-1b,us-east-1c" {
		t.Errorf("zones %s", got)
	}
}

// A gang NodeClaim launches into its gang's cluster group, whatever its
// class says; others into their class's group.
func TestLaunchGroup(t *testing.T) {
	cls := &apiv1.EC2NodeClass{}
	gangClaim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{apiv1.LabelGangPlacementGroup: "pg-g"}}}
	if pg := launchGroup(gangClaim, cls); pg == nil || *pg != (apiv1.PlacementGroupStatus{ID: "pg-g", Strategy: apiv1.PlacementStrategyCluster}) {
		t.Errorf("gang claim: %+v", pg)
	}
	if pg := launchGroup(&apiv1.NodeClaim{}, cls); pg != nil {
		t.Errorf("plain claim of a class without a group: %+v", pg)
	}
	cls.Status.PlacementGroup = &apiv1.PlacementGroupStatus{ID: "pg-c", Strategy: apiv1.PlacementStrategySpread}
	if pg := launchGroup(&apiv1.NodeClaim{}, cls); pg == nil || pg.ID != "pg-c" {
		t.Errorf("plain claim: %+v, want the class's", pg)
	}
}
