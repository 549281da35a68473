package activities

import (
	"testing"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

// A plan that put 4 NodeClaims on a reservation with 3 instances left
// keeps the first 3 there; the 4th launches as its next cheapest offering.
func TestCapReservations(t *testing.T) {
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.large")
	c6a, _ := cat.Get("c6a.large")
	claim := func() solver.NewNodeClaim {
		return solver.NewNodeClaim{NodePool: "p", InstanceTypes: []solver.InstanceTypeOption{
			{Type: m5, Offerings: []catalog.Offering{
				{Zone: "us-east-1a", CapacityType: "reserved", Price: catalog.ReservedPrice(m5), Available: true, ReservationID: "cr-a"},
				{Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.096, Available: true},
			}},
			{Type: c6a, Offerings: []catalog.Offering{{Zone: "us-east-1b", CapacityType: "spot", Price: 0.029, Available: true}}},
		}}
	}
	claims := []solver.NewNodeClaim{claim(), claim(), claim(), claim(), {NodePool: "p", InstanceTypes: []solver.InstanceTypeOption{
		{Type: c6a, Offerings: []catalog.Offering{{Zone: "us-east-1b", CapacityType: "spot", Price: 0.029, Available: true}}}}}}
	budget := map[string]int{"cr-a": 3}
	if n := capReservations(claims, budget); n != 1 {
		t.Errorf("%d NodeClaims moved off the reservation, want 1", n)
	}
	for i := 0; i < 3; i++ {
		if o := flattenOfferings(claims[i]); o[0].CapacityType != "reserved" || o[0].ReservationID != "cr-a" {
			t.Errorf("claim %d first offering %+v, want reserved cr-a", i, o[0])
		}
	}
	fourth := flattenOfferings(claims[3])
	if len(fourth) != 2 || fourth[0].InstanceType != "c6a.large" || fourth[0].CapacityType != "spot" || fourth[1].CapacityType != "on-demand" {
		t.Errorf("claim 3 offerings %+v, want c6a spot then m5 on-demand", fourth)
	}
	if claims[3].InstanceTypes[0].Type.Name != "c6a.large" {
		t.Errorf("claim 3 types not re-sorted: first %s", claims[3].InstanceTypes[0].Type.Name)
	}
	if budget["cr-a"] != 0 {
		t.Errorf("budget left %d", budget["cr-a"])
	}
}
