package nodeclass

import (
	"math"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
)

// ReservationKind is what a reserved launch is sent as: one reservation
// type, interruptible or not. CreateFleet takes one kind per request.
type ReservationKind struct {
	Type          string // apiv1.CapacityReservationTypeDefault or ...CapacityBlock
	Interruptible bool
}

// kindPriority breaks price ties between kinds as Karpenter's
// capacity-reservation-type filter does: default, then capacity blocks,
// then interruptible reservations.
func kindPriority(k ReservationKind) int {
	switch {
	case k.Interruptible:
		return 2
	case k.Type == apiv1.CapacityReservationTypeCapacityBlock:
		return 1
	}
	return 0
}

// ReservedLaunchOfferings narrows a reserved launch's offerings to what
// one CreateFleet can take, as Karpenter's launch filters do: the kind
// (reservation type, interruptibility) with the cheapest offering wins
// (ties: kindPriority) and only its offerings are kept; for a capacity
// block only the single cheapest offering (CreateFleet takes one block
// per request). Offerings whose reservation the class's status does not
// list are left to the caller (kept). The order of offs is kept.
func ReservedLaunchOfferings(cls *apiv1.EC2NodeClass, offs []saga.Offering) ([]saga.Offering, ReservationKind) {
	cheapest := map[ReservationKind]float64{}
	kindOf := func(o saga.Offering) (ReservationKind, bool) {
		r, ok := ReservationFor(cls, o.ReservationID)
		if !ok {
			return ReservationKind{}, false
		}
		k := ReservationKind{Type: r.ReservationType, Interruptible: r.Interruptible}
		if k.Type == "" {
			k.Type = apiv1.CapacityReservationTypeDefault
		}
		return k, true
	}
	for _, o := range offs {
		if k, ok := kindOf(o); ok {
			if p, seen := cheapest[k]; !seen || o.Price < p {
				cheapest[k] = o.Price
			}
		}
	}
	best, bestPrice, found := ReservationKind{Type: apiv1.CapacityReservationTypeDefault}, math.Inf(1), false
	for k, p := range cheapest {
		if !found || p < bestPrice || (p == bestPrice && kindPriority(k) < kindPriority(best)) {
			best, bestPrice, found = k, p, true
		}
	}
	blockAt := -1 // the cheapest block offering (the first of equals)
	if best.Type == apiv1.CapacityReservationTypeCapacityBlock {
		for i, o := range offs {
			if k, ok := kindOf(o); ok && k == best && (blockAt < 0 || o.Price < offs[blockAt].Price) {
				blockAt = i
			}
		}
	}
	var out []saga.Offering
	for i, o := range offs {
		if k, ok := kindOf(o); ok && (k != best || (blockAt >= 0 && i != blockAt)) {
			continue
		}
		out = append(out, o)
	}
	return out, best
}
