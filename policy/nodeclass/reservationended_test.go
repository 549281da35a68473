package nodeclass

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

func TestOutOfReservation(t *testing.T) {
	reserved := map[string]string{apiv1.LabelCapacityType: "reserved", apiv1.LabelCapacityReservationID: "cr-1",
		apiv1.LabelCapacityReservationType: "default", "team": "ml"}
	got := OutOfReservation(reserved, apiv1.CapacityTypeOnDemand)
	if len(got) != 3 || got[apiv1.LabelCapacityType] == nil || *got[apiv1.LabelCapacityType] != "on-demand" ||
		got[apiv1.LabelCapacityReservationID] != nil || got[apiv1.LabelCapacityReservationType] != nil {
		t.Errorf("ended reservation: %v", got)
	}
	if _, ok := got[apiv1.LabelCapacityReservationID]; !ok {
		t.Error("the reservation id label is not removed")
	}
	for _, c := range []struct {
		labels map[string]string
		inst   string
	}{
		{reserved, apiv1.CapacityTypeReserved},                                                // still in its reservation
		{reserved, apiv1.CapacityTypeSpot},                                                    // not Karpenter's case
		{map[string]string{apiv1.LabelCapacityType: "on-demand"}, apiv1.CapacityTypeReserved}, // never promoted
	} {
		if got := OutOfReservation(c.labels, c.inst); got != nil {
			t.Errorf("labels %v, instance %s: %v, want no change", c.labels, c.inst, got)
		}
	}
}
