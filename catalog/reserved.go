package catalog

import (
	"slices"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// ReservedPriceDivisor: a reserved offering costs the type's on-demand
// price divided by it, as Karpenter prices reservations: the instances are
// paid for already, so they are all but free and used first, while the
// prices keep their order (consolidation still prefers the smaller type).
const ReservedPriceDivisor = 10_000_000.0

// ReservedPrice is what a reserved instance of the type is priced at.
func ReservedPrice(it *InstanceType) float64 { return it.OnDemandPrice / ReservedPriceDivisor }

// reservationCounts is how many instances each reservation has left, as
// this controller knows it: the count EC2 last reported
// (status.capacityReservations[].availableInstanceCount), less this
// controller's launches into it since. A new count from EC2 replaces it.
type reservationCounts struct {
	mu   sync.Mutex
	seen map[string]int32 // the status count the left value started from
	left map[string]int
}

// ReservationAvailable is how many more instances the reservation can
// take: its status count, less the launches ReservationLaunched counted
// since that count was first seen. 0 when the status has no count (a
// status copied from Karpenter), as Karpenter treats a reservation it has
// not described. A nil Market uses the status count as it is.
func (m *Market) ReservationAvailable(r apiv1.CapacityReservationStatus) int {
	if r.AvailableInstanceCount == nil {
		return 0
	}
	n := *r.AvailableInstanceCount
	if m == nil {
		return int(max(n, 0))
	}
	c := &m.reserved
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen, c.left = map[string]int32{}, map[string]int{}
	}
	if prev, ok := c.seen[r.ID]; !ok || prev != n {
		c.seen[r.ID], c.left[r.ID] = n, int(max(n, 0))
	}
	return c.left[r.ID]
}

// ReservationLaunched counts one instance launched into the reservation.
func (m *Market) ReservationLaunched(id string) {
	if m == nil {
		return
	}
	c := &m.reserved
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.left[id]; ok && n > 0 {
		c.left[id] = n - 1
	}
}

// ReservationUsedUp records that EC2 refused a launch into the reservation
// for capacity (ReservationCapacityExceeded): nothing is left until EC2
// reports a new count.
func (m *Market) ReservationUsedUp(id string) {
	if m == nil {
		return
	}
	c := &m.reserved
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.left[id]; ok {
		c.left[id] = 0
	}
}

// SetCapacityBlockExpiration sets how long before its end a capacity
// block stops taking launches (0: apiv1.CapacityBlockExpirationPeriod).
func (m *Market) SetCapacityBlockExpiration(d time.Duration) { m.blockExpiration.Store(int64(d)) }

// CapacityBlockExpiration is the period SetCapacityBlockExpiration set
// (nil-safe; 0 means Karpenter's 40 minutes).
func (m *Market) CapacityBlockExpiration() time.Duration {
	if m == nil {
		return 0
	}
	return time.Duration(m.blockExpiration.Load())
}

// ReservedOfferings are the type's offerings of capacity type "reserved":
// one per reservation of the type (reservations, an EC2NodeClass's
// status.capacityReservations) in one of zones, each carrying its
// reservation's id, type and interruptibility. All are priced at
// ReservedPrice, capacity blocks and interruptible reservations too, as
// Karpenter prices them (a block is paid for up front). An offering is
// available while its reservation has instances left
// (ReservationAvailable) and is not an expiring capacity block (by its
// status state or its end time now).
func (m *Market) ReservedOfferings(it *InstanceType, reservations []apiv1.CapacityReservationStatus, zones []string) []Offering {
	var out []Offering
	now := time.Now()
	for _, r := range reservations {
		if r.InstanceType != it.Name || !slices.Contains(zones, r.AvailabilityZone) ||
			(r.State != "" && r.State != apiv1.CapacityReservationStateActive && r.State != apiv1.CapacityReservationStateExpiring) {
			continue
		}
		typ := r.ReservationType
		if typ == "" {
			typ = apiv1.CapacityReservationTypeDefault
		}
		expiring := r.State == apiv1.CapacityReservationStateExpiring || apiv1.CapacityBlockExpiring(r, now, m.CapacityBlockExpiration())
		out = append(out, Offering{Zone: r.AvailabilityZone, CapacityType: apiv1.CapacityTypeReserved, Price: ReservedPrice(it),
			Available: !expiring && m.ReservationAvailable(r) > 0, ReservationID: r.ID,
			ReservationType: typ, ReservationInterruptible: r.Interruptible})
	}
	return out
}
