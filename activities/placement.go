package activities

import (
	"context"
	"fmt"
	"strconv"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// placementLabels adds Karpenter's placement group labels for a node of a
// class with a placement group: the group the instance runs in and, in a
// partition group, the partition EC2 put it in (Karpenter's registration
// hook reads it the same way, from DescribeInstances). CreateFleet does not
// say either, so the instance is described; until EC2 shows it the
// activity fails and is retried.
func (a *Lifecycle) placementLabels(ctx context.Context, nc *apiv1.NodeClaim, instanceID string, lbl map[string]string) error {
	if nc.Spec.NodeClassRef == nil {
		return nil
	}
	cls, err := a.cluster.NodeClass(nc.Spec.NodeClassRef.Name)
	if err != nil || (cls.Spec.PlacementGroupSelector == nil && cls.Status.PlacementGroup == nil) {
		return nil // a class gone, or without a group
	}
	inst, err := a.cloud.Get(ctx, instanceID)
	if err != nil {
		return fmt.Errorf("placement group of instance %s: %w", instanceID, err)
	}
	if inst.PlacementGroupID == "" {
		return nil
	}
	lbl[apiv1.LabelPlacementGroupID] = inst.PlacementGroupID
	if inst.PartitionNumber > 0 {
		lbl[apiv1.LabelPlacementGroupPartition] = strconv.Itoa(int(inst.PartitionNumber))
	}
	return nil
}

// launchGroup is the group a NodeClaim launches into: its gang's cluster
// group (the try created it, apiv1.LabelGangPlacementGroup), else its
// class's (nil: none).
func launchGroup(nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass) *apiv1.PlacementGroupStatus {
	if id := nc.Labels[apiv1.LabelGangPlacementGroup]; id != "" {
		return &apiv1.PlacementGroupStatus{ID: id, Strategy: apiv1.PlacementStrategyCluster}
	}
	return cls.Status.PlacementGroup
}

// placementGroupOf is the id of the class's placement group ("" none).
func placementGroupOf(cls *apiv1.EC2NodeClass) string {
	if pg := cls.Status.PlacementGroup; pg != nil {
		return pg.ID
	}
	return ""
}

// partitionOf is the partition a NodeClaim of a partition group was
// given: its placement-group-partition label, which the solver sets when
// topology or its pods ask for a partition (Karpenter's single-value
// requirement); 0 (EC2 picks) otherwise, as for most NodeClaims. The
// claim's requirement alone (the group's partitions) names none.
func partitionOf(nc *apiv1.NodeClaim, pg *apiv1.PlacementGroupStatus) int32 {
	if pg.Strategy != apiv1.PlacementStrategyPartition {
		return 0
	}
	return partitionNumber(nc.Labels[apiv1.LabelPlacementGroupPartition], pg)
}

// partitionNumber is v as one of the group's partitions (0: it is not).
func partitionNumber(v string, pg *apiv1.PlacementGroupStatus) int32 {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || int32(n) > pg.PartitionCount {
		return 0
	}
	return int32(n)
}
