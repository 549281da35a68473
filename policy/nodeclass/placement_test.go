package nodeclass

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cluster group launches where its instances run; empty, in the zone it
// was given before (while the class still has it), else the class's first
// zone; LaunchZones narrows a class to it and leaves other classes alone.
func TestClusterZone(t *testing.T) {
	subnets := []apiv1.SubnetStatus{{ID: "s-c", Zone: "us-east-1c"}, {ID: "s-b", Zone: "us-east-1b"}}
	prev := &apiv1.PlacementGroupStatus{ID: "pg-1", Zone: "us-east-1c"}
	for _, c := range []struct {
		running []string
		id      string
		prev    *apiv1.PlacementGroupStatus
		want    string
	}{
		{[]string{"us-east-1a"}, "pg-1", prev, "us-east-1a"},
		{nil, "pg-1", prev, "us-east-1c"},
		{nil, "pg-2", prev, "us-east-1b"},
		{nil, "pg-1", nil, "us-east-1b"},
	} {
		if got := ClusterZone(c.running, subnets, c.id, c.prev); got != c.want {
			t.Errorf("running %v, group %s, prev %+v: %s, want %s", c.running, c.id, c.prev, got, c.want)
		}
	}
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	cls := &apiv1.EC2NodeClass{}
	for _, c := range []struct {
		pg   *apiv1.PlacementGroupStatus
		want string
	}{
		{nil, "us-east-1a,us-east-1b,us-east-1c"},
		{&apiv1.PlacementGroupStatus{Strategy: apiv1.PlacementStrategySpread}, "us-east-1a,us-east-1b,us-east-1c"},
		{&apiv1.PlacementGroupStatus{Strategy: apiv1.PlacementStrategyCluster, Zone: "us-east-1b"}, "us-east-1b"},
		{&apiv1.PlacementGroupStatus{Strategy: apiv1.PlacementStrategyCluster, Zone: "us-east-1d"}, ""},
	} {
		cls.Status.PlacementGroup = c.pg
		if got := strings.Join(LaunchZones(cls, zones), ","); got != c.want {
			t.Errorf("%+v: zones %s, want %s", c.pg, got, c.want)
		}
	}
}

// As Karpenter: a launched node whose placement group label is not its
// class's group drifts (PlacementGroupDrift): the group removed, added or
// resolving to another id; a node not launched yet does not.
func TestPlacementGroupDrift(t *testing.T) {
	cls := &apiv1.EC2NodeClass{Status: Status(nil, Resolution{Subnets: []apiv1.SubnetStatus{{ID: "subnet-1"}},
		SecurityGroups: []apiv1.SecurityGroupStatus{{ID: "sg-1"}}, AMIs: []apiv1.AMIStatus{{ID: "ami-1"}}, InstanceProfile: "p"}, 0, metav1.Now())}
	for _, c := range []struct {
		label, class string
		launched     bool
		want         string
	}{
		{"", "", true, ""},
		{"pg-1", "pg-1", true, ""},
		{"pg-1", "", true, ReasonPlacementGroupDrift},
		{"", "pg-1", true, ReasonPlacementGroupDrift},
		{"pg-1", "pg-2", true, ReasonPlacementGroupDrift},
		{"", "pg-1", false, ""},
	} {
		cls.Status.PlacementGroup = nil
		if c.class != "" {
			cls.Status.PlacementGroup = &apiv1.PlacementGroupStatus{ID: c.class}
		}
		l := Launched{PlacementGroupID: c.label}
		if c.launched {
			l.ImageID = cls.Status.AMIs[0].ID
		}
		if got := DriftReason(l, cls); got != c.want {
			t.Errorf("node %q, class %q, launched %v: %q, want %q", c.label, c.class, c.launched, got, c.want)
		}
	}
	// A gang's node is in its gang's group, not its class's: not drifted
	// for it (its class has none).
	cls.Status.PlacementGroup = nil
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{apiv1.LabelPlacementGroupID: "pg-g", apiv1.LabelGangPlacementGroup: "pg-g"}},
		Status: apiv1.NodeClaimStatus{ImageID: "ami-1"}}
	if got := DriftReason(LaunchedFrom(nc), cls); got != "" {
		t.Errorf("gang node: %q, want no drift", got)
	}
}
