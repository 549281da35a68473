package activities

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// A NodeClaim of a partition group launches into the partition the solver
// gave it (its label); with the group's partitions only as a requirement,
// or in another kind of group, EC2 picks (0).
func TestPartitionOf(t *testing.T) {
	part := &apiv1.PlacementGroupStatus{ID: "pg-1", Strategy: apiv1.PlacementStrategyPartition, PartitionCount: 3}
	claim := func(values ...string) *apiv1.NodeClaim {
		nc := &apiv1.NodeClaim{}
		if len(values) > 0 {
			nc.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelPlacementGroupPartition, Operator: apiv1.OpIn, Values: values}}
		}
		return nc
	}
	labelled := func(v string, nc *apiv1.NodeClaim) *apiv1.NodeClaim {
		nc.Labels = map[string]string{apiv1.LabelPlacementGroupPartition: v}
		return nc
	}
	for _, c := range []struct {
		nc   *apiv1.NodeClaim
		pg   *apiv1.PlacementGroupStatus
		want int32
	}{
		{claim(), part, 0},
		{claim("1", "2", "3"), part, 0},
		{labelled("2", claim()), part, 2},
		{labelled("7", claim()), part, 0},
		{labelled("x", claim()), part, 0},
		{labelled("2", claim()), &apiv1.PlacementGroupStatus{Strategy: apiv1.PlacementStrategyCluster}, 0},
		{labelled("3", claim("1", "2", "3")), part, 3},
	} {
		if got := partitionOf(c.nc, c.pg); got != c.want {
			t.Errorf("%+v in %+v: %d, want %d", c.nc.Spec.Requirements, c.pg, got, c.want)
		}
	}
}
