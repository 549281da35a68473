package activities

import (
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/kube"
)

// reservationBudget is how many more instances each capacity reservation
// of every EC2NodeClass can take, as this controller knows it
// (catalog.Market.ReservationAvailable).
func reservationBudget(cl *kube.Cluster, m *catalog.Market) map[string]int {
	out := map[string]int{}
	for _, cls := range cl.NodeClasses() {
		for _, r := range cls.Status.CapacityReservations {
			out[r.ID] = m.ReservationAvailable(r)
		}
	}
	return out
}
