package nodeclass

import (
	"sort"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
)

// CapReservations keeps a plan from counting on more instances of a
// capacity reservation than it has left: the solver prices every reserved
// offering near zero whatever the count, so it may put more new
// NodeClaims on one reservation than it holds. In plan order, a NodeClaim
// whose cheapest offering is reserved takes one instance of that
// reservation; once a reservation is used up, its offerings are marked
// unavailable on the NodeClaims that come after, which then launch as
// their next cheapest offering (another reservation, spot or on-demand).
// The NodeClaims' instance types are re-sorted by their cheapest available
// offering. It returns how many NodeClaims lost a reservation.
func CapReservations(claims []solver.NewNodeClaim, budget map[string]int) int {
	moved := 0
	for c := range claims {
		nn := &claims[c]
		lost := false
		for {
			best, ok := cheapestOf(nn)
			if !ok || best.CapacityType != apiv1.CapacityTypeReserved {
				break
			}
			if budget[best.ReservationID] > 0 {
				budget[best.ReservationID]--
				break
			}
			lost = true
			for t := range nn.InstanceTypes {
				offs := nn.InstanceTypes[t].Offerings
				for o := range offs {
					if offs[o].ReservationID == best.ReservationID {
						offs[o].Available = false
					}
				}
			}
		}
		if lost {
			moved++
			sort.SliceStable(nn.InstanceTypes, func(i, j int) bool {
				return priceOrInf(nn.InstanceTypes[i]) < priceOrInf(nn.InstanceTypes[j])
			})
		}
	}
	return moved
}

// cheapestOf is the NodeClaim's cheapest available offering over all its
// instance types (ties: the earlier type, then the lower zone).
func cheapestOf(nn *solver.NewNodeClaim) (best struct {
	CapacityType, ReservationID string
	Price                       float64
}, found bool) {
	for _, it := range nn.InstanceTypes {
		o := solver.CheapestOffering(it.Offerings)
		if !o.Available {
			continue
		}
		if !found || o.Price < best.Price {
			best.CapacityType, best.ReservationID, best.Price, found = o.CapacityType, o.ReservationID, o.Price, true
		}
	}
	return best, found
}

func priceOrInf(it solver.InstanceTypeOption) float64 {
	o := solver.CheapestOffering(it.Offerings)
	if !o.Available {
		return 1e308
	}
	return o.Price
}
