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
// knows (open, targeted), of the default type (capacity blocks are not
// launched into), one per id, sorted by id. skipped names each one left
// out and why ("cr-1: capacity-block reservations are not supported").
func SelectReservations(in []apiv1.CapacityReservationStatus, now time.Time) (out []apiv1.CapacityReservationStatus, skipped []string) {
	seen := map[string]bool{}
	for _, r := range in {
		switch {
		case seen[r.ID]:
			continue
		case r.EndTime != nil && !r.EndTime.Time.After(now):
			skipped = append(skipped, r.ID+": ended "+r.EndTime.UTC().Format(time.RFC3339))
		case r.InstanceMatchCriteria != apiv1.InstanceMatchCriteriaOpen && r.InstanceMatchCriteria != apiv1.InstanceMatchCriteriaTargeted:
			skipped = append(skipped, fmt.Sprintf("%s: instance match criteria %q is not open or targeted", r.ID, r.InstanceMatchCriteria))
		case r.ReservationType != "" && r.ReservationType != apiv1.CapacityReservationTypeDefault:
			skipped = append(skipped, fmt.Sprintf("%s: %s reservations are not supported", r.ID, r.ReservationType))
		case r.Interruptible:
			skipped = append(skipped, r.ID+": interruptible reservations are not supported")
		default:
			seen[r.ID] = true
			if r.State == "" {
				r.State = apiv1.CapacityReservationStateActive
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b apiv1.CapacityReservationStatus) int { return strings.Compare(a.ID, b.ID) })
	return out, skipped
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
