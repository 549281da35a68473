package activities

// reservationBudget is how many more instances each capacity reservation
// of every EC2NodeClass can take, as this controller knows it
// (catalog.Market.ReservationAvailable).
func (a *world) reservationBudget() map[string]int {
	out := map[string]int{}
	for _, cls := range a.Cluster.NodeClasses() {
		for _, r := range cls.Status.CapacityReservations {
			out[r.ID] = a.Market.ReservationAvailable(r)
		}
	}
	return out
}
