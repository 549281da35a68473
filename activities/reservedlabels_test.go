package activities

import (
	"reflect"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// A reserved node is labelled as Karpenter labels it (id, type,
// interruptible "true"/"false"), and its template's market type is
// capacity-block or interruptible-capacity-reservation by its kind.
func TestReservationLabelsAndMarketType(t *testing.T) {
	cls := &apiv1.EC2NodeClass{}
	cls.Status.CapacityReservations = []apiv1.CapacityReservationStatus{
		{ID: "cr-block", ReservationType: "capacity-block"}, {ID: "cr-lent", ReservationType: "default", Interruptible: true},
		{ID: "cr-odcr", ReservationType: "default"},
	}
	for _, c := range []struct {
		id, market string
		labels     map[string]string
	}{
		{"cr-block", "capacity-block", map[string]string{apiv1.LabelCapacityReservationID: "cr-block",
			apiv1.LabelCapacityReservationType: "capacity-block", apiv1.LabelCapacityReservationInterruptible: "false"}},
		{"cr-lent", "interruptible-capacity-reservation", map[string]string{apiv1.LabelCapacityReservationID: "cr-lent",
			apiv1.LabelCapacityReservationType: "default", apiv1.LabelCapacityReservationInterruptible: "true"}},
		{"cr-odcr", "", map[string]string{apiv1.LabelCapacityReservationID: "cr-odcr",
			apiv1.LabelCapacityReservationType: "default", apiv1.LabelCapacityReservationInterruptible: "false"}},
	} {
		r := reservationOn(cls, c.id)
		nc := &apiv1.NodeClaim{}
		l := nodeLabels(nc, apiv1.CapacityTypeReserved, r)
		delete(l, apiv1.LabelCapacityType)
		if r.marketType() != c.market || !reflect.DeepEqual(l, c.labels) {
			t.Errorf("%s: market %q labels %v, want %q %v", c.id, r.marketType(), l, c.market, c.labels)
		}
	}
	if r := reservationOn(cls, ""); r.marketType() != "" || len(nodeLabels(&apiv1.NodeClaim{}, "spot", r)) != 1 {
		t.Errorf("no reservation: %+v", r)
	}
}
