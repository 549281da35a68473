package v1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClassStatus is karpenter.k8s.aws/v1 EC2NodeClass.status: what the
// selector terms resolved to, and whether the class can launch.
type EC2NodeClassStatus struct {
	Subnets         []SubnetStatus        `json:"subnets,omitempty"`
	SecurityGroups  []SecurityGroupStatus `json:"securityGroups,omitempty"`
	AMIs            []AMIStatus           `json:"amis,omitempty"`
	InstanceProfile string                `json:"instanceProfile,omitempty"`
	Conditions      []metav1.Condition    `json:"conditions,omitempty"`
	// CapacityReservations are the active reservations
	// spec.capacityReservationSelectorTerms select (DescribeCapacityReservations),
	// sorted by id.
	CapacityReservations []CapacityReservationStatus `json:"capacityReservations,omitempty"`
	// PlacementGroup is the group spec.placementGroupSelector resolves to
	// (DescribePlacementGroups, state available). Joinery's addition:
	// Karpenter keeps it in memory; here the launch, the planner and drift
	// read the one resolution. Nil without a selector or when not found.
	PlacementGroup *PlacementGroupStatus `json:"placementGroup,omitempty"`
}

// PlacementGroupStatus is the resolved placement group.
type PlacementGroupStatus struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Strategy string `json:"strategy"` // cluster, partition or spread
	// PartitionCount is a partition group's partitions.
	PartitionCount int32 `json:"partitionCount,omitempty"`
	// SpreadLevel is a spread group's (rack or host).
	SpreadLevel string `json:"spreadLevel,omitempty"`
	// Zone is where a cluster group launches: the zone of its running
	// instances or, while it has none, the class's first zone (by name),
	// since EC2 keeps a cluster group in one zone. Empty for the others.
	Zone string `json:"zone,omitempty"`
}

// Placement group strategies (PlacementGroupStatus.Strategy).
const (
	PlacementStrategyCluster   = "cluster"
	PlacementStrategyPartition = "partition"
	PlacementStrategySpread    = "spread"
)

// CapacityReservationStatus is one of Karpenter's status.capacityReservations.
type CapacityReservationStatus struct {
	AvailabilityZone      string       `json:"availabilityZone"`
	EndTime               *metav1.Time `json:"endTime,omitempty"`
	ID                    string       `json:"id"`
	InstanceMatchCriteria string       `json:"instanceMatchCriteria"`
	InstanceType          string       `json:"instanceType"`
	OwnerID               string       `json:"ownerID"`
	ReservationType       string       `json:"reservationType,omitempty"`
	Interruptible         bool         `json:"interruptible,omitempty"`
	State                 string       `json:"state,omitempty"`
	// AvailableInstanceCount is how many more instances the reservation
	// could take when it was last described (Joinery's addition: Karpenter
	// keeps it in memory). Nil in a status copied from Karpenter.
	AvailableInstanceCount *int32 `json:"availableInstanceCount,omitempty"`
}

// Capacity reservation values Joinery reads (CapacityReservationStatus).
const (
	CapacityReservationTypeDefault       = "default"
	CapacityReservationTypeCapacityBlock = "capacity-block"
	CapacityReservationStateActive       = "active"
	// CapacityReservationStateExpiring: a capacity block within
	// CapacityBlockExpirationPeriod of its end (Karpenter's state): no
	// launches into it, and its nodes are drained.
	CapacityReservationStateExpiring = "expiring"
	InstanceMatchCriteriaOpen        = "open"
	InstanceMatchCriteriaTargeted    = "targeted"
)

// SubnetStatus is one resolved subnet.
type SubnetStatus struct {
	ID     string `json:"id"`
	Zone   string `json:"zone"`
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroupStatus is one resolved security group.
type SecurityGroupStatus struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// AMIStatus is one resolved image with the requirements of the instance
// types it serves (architecture, and GPU/accelerator for alias variants).
type AMIStatus struct {
	ID           string                           `json:"id"`
	Name         string                           `json:"name,omitempty"`
	Deprecated   bool                             `json:"deprecated,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// EC2NodeClass condition types.
const (
	ConditionSubnetsReady         = "SubnetsReady"
	ConditionSecurityGroupsReady  = "SecurityGroupsReady"
	ConditionAMIsReady            = "AMIsReady"
	ConditionInstanceProfileReady = "InstanceProfileReady"
	// ConditionCapacityReservationsReady is True once the class's
	// capacityReservationSelectorTerms were resolved (none set: True).
	ConditionCapacityReservationsReady = "CapacityReservationsReady"
	// ConditionPlacementGroupReady is True once spec.placementGroupSelector
	// resolved to a group (none set: True); False with reason
	// PlacementGroupNotFound when EC2 has no such group.
	ConditionPlacementGroupReady = "PlacementGroupReady"
	// ConditionValidationSucceeded is False when the class sets fields
	// Joinery does not honour (reason UnsupportedField, naming them).
	ConditionValidationSucceeded = "ValidationSucceeded"
	// ConditionDrifted on a NodeClaim says it no longer matches its
	// NodePool or EC2NodeClass; the reason says which.
	ConditionDrifted = "Drifted"
	// FinalizerNodeClassTermination keeps an EC2NodeClass until the
	// instance profile and launch templates Joinery made for it are gone.
	FinalizerNodeClassTermination = "karpenter.k8s.aws/termination"
)

// CapacityBlockExpirationPeriod is how long before a capacity block's end
// Karpenter marks it expiring and deletes its nodes: 40 minutes, 10 before
// EC2 starts terminating its instances (30 minutes before the end).
const CapacityBlockExpirationPeriod = 40 * time.Minute

// CapacityBlockExpiring reports whether r is a capacity block that is
// within period (CapacityBlockExpirationPeriod unless shortened) of its
// end at now. Other reservations never expire this way.
func CapacityBlockExpiring(r CapacityReservationStatus, now time.Time, period time.Duration) bool {
	if r.ReservationType != CapacityReservationTypeCapacityBlock || r.EndTime == nil {
		return false
	}
	if period <= 0 {
		period = CapacityBlockExpirationPeriod
	}
	return !now.Before(r.EndTime.Add(-period))
}
