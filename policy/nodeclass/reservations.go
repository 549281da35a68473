package nodeclass

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// SelectReservations is what status.capacityReservations holds of the
// reservations DescribeCapacityReservations returned for the class's terms:
// those not yet ended at now, with an instance match criteria Joinery
// knows (open, targeted), of a type Karpenter knows (default,
// capacity-block; an interruptible capacity block does not exist), one per
// id, sorted by id. A capacity block within period of its end (0:
// apiv1.CapacityBlockExpirationPeriod) is in state expiring, as
// Karpenter's status says: no launches into it, its nodes are drained.
// skipped names each one left out and why.
func SelectReservations(in []apiv1.CapacityReservationStatus, now time.Time, period time.Duration) (out []apiv1.CapacityReservationStatus, skipped []string) {
	seen := map[string]bool{}
	for _, r := range in {
		if seen[r.ID] {
			continue
		}
		if why := unusable(r, now); why != "" {
			skipped = append(skipped, r.ID+": "+why)
			continue
		}
		seen[r.ID] = true
		if r.ReservationType == "" {
			r.ReservationType = apiv1.CapacityReservationTypeDefault
		}
		r.State = apiv1.CapacityReservationStateActive
		if apiv1.CapacityBlockExpiring(r, now, period) {
			r.State = apiv1.CapacityReservationStateExpiring
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b apiv1.CapacityReservationStatus) int { return strings.Compare(a.ID, b.ID) })
	return out, skipped
}

// unusable says why a described reservation cannot be selected ("" when it can).
func unusable(r apiv1.CapacityReservationStatus, now time.Time) string {
	switch {
	case r.EndTime != nil && !r.EndTime.Time.After(now):
		return "ended " + r.EndTime.UTC().Format(time.RFC3339)
	case r.InstanceMatchCriteria != apiv1.InstanceMatchCriteriaOpen && r.InstanceMatchCriteria != apiv1.InstanceMatchCriteriaTargeted:
		return fmt.Sprintf("instance match criteria %q is not open or targeted", r.InstanceMatchCriteria)
	case r.ReservationType != "" && r.ReservationType != apiv1.CapacityReservationTypeDefault &&
		r.ReservationType != apiv1.CapacityReservationTypeCapacityBlock:
		return fmt.Sprintf("reservation type %q is not default or capacity-block", r.ReservationType)
	case r.Interruptible && r.ReservationType == apiv1.CapacityReservationTypeCapacityBlock:
		return "an interruptible capacity block is not a reservation type EC2 has"
	}
	return ""
}

// ReservationFor is the class's resolved reservation with the id (false
// when status.capacityReservations has none).
func ReservationFor(cls *apiv1.EC2NodeClass, id string) (apiv1.CapacityReservationStatus, bool) {
	if cls == nil {
		return apiv1.CapacityReservationStatus{}, false
	}
	for _, r := range cls.Status.CapacityReservations {
		if r.ID == id {
			return r, true
		}
	}
	return apiv1.CapacityReservationStatus{}, false
}
