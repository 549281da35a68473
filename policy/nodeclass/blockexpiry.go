package nodeclass

import (
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gc"
)

// BlockReclaim is how long before a capacity block's end EC2 starts
// terminating its instances: the deadline of the drain Karpenter starts
// 10 minutes earlier (apiv1.CapacityBlockExpirationPeriod).
const BlockReclaim = 30 * time.Minute

// ExpiringBlockNode is a NodeClaim in a capacity block that is expiring.
type ExpiringBlockNode struct {
	NodeClaim, InstanceID, ReservationID string
	// Deadline is when EC2 starts terminating the block's instances.
	Deadline time.Time
}

// ExpiringBlockNodes are the launched NodeClaims (sorted by name) whose
// capacity block (by their karpenter.k8s.aws/capacity-reservation-id,
// looked up in their class's status.capacityReservations) is within period
// of its end at now (Karpenter's capacityreservation.expiration
// controller): each is drained with the block's reclaim as deadline. A
// NodeClaim already being deleted is left out.
func ExpiringBlockNodes(claims []*apiv1.NodeClaim, classOf func(string) *apiv1.EC2NodeClass, now time.Time, period time.Duration) []ExpiringBlockNode {
	var out []ExpiringBlockNode
	for _, nc := range claims {
		id := nc.Labels[apiv1.LabelCapacityReservationID]
		inst := gc.InstanceID(nc.Status.ProviderID)
		if id == "" || inst == "" || nc.DeletionTimestamp != nil || nc.Spec.NodeClassRef == nil {
			continue
		}
		r, ok := ReservationFor(classOf(nc.Spec.NodeClassRef.Name), id)
		if !ok || !apiv1.CapacityBlockExpiring(r, now, period) {
			continue
		}
		out = append(out, ExpiringBlockNode{NodeClaim: nc.Name, InstanceID: inst, ReservationID: id, Deadline: r.EndTime.Add(-BlockReclaim)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeClaim < out[j].NodeClaim })
	return out
}
