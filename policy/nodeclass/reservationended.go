package nodeclass

import apiv1 "github.com/joinery/joinery/api/v1"

// reservedLabels are the labels a node of a reservation carries besides
// its capacity type (Karpenter's ReservedCapacityLabels).
var reservedLabels = []string{apiv1.LabelCapacityReservationID, apiv1.LabelCapacityReservationType, apiv1.LabelCapacityReservationInterruptible}

// OutOfReservation is the label change of a node labelled reserved whose
// instance EC2 now runs as On-Demand capacity (its reservation expired or
// was cancelled), as Karpenter's capacityreservation.capacitytype
// controller makes it: capacity type on-demand, the reservation labels
// removed (nil values, a merge patch's deletions). Nil when nothing
// changes: the node is not labelled reserved, or the instance still runs
// in a reservation or is spot. Only reserved to on-demand: an on-demand
// node is never promoted.
func OutOfReservation(labels map[string]string, instanceCapacityType string) map[string]*string {
	if labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeReserved || instanceCapacityType != apiv1.CapacityTypeOnDemand {
		return nil
	}
	onDemand := apiv1.CapacityTypeOnDemand
	out := map[string]*string{apiv1.LabelCapacityType: &onDemand}
	for _, k := range reservedLabels {
		if _, ok := labels[k]; ok {
			out[k] = nil
		}
	}
	return out
}
