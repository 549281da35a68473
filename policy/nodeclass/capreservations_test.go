package nodeclass

import (
	"testing"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

func TestCapReservations(t *testing.T) {
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.large")
	c6a, _ := cat.Get("c6a.large")
	spot := solver.InstanceTypeOption{Type: c6a, Offerings: []catalog.Offering{{Zone: "us-east-1b", CapacityType: "spot", Price: 0.029, Available: true}}}
	// reserved is a NodeClaim whose cheapest offering is reservation id,
	// then on-demand m5, then spot c6a.
	reserved := func(id string) solver.NewNodeClaim {
		return solver.NewNodeClaim{NodePool: "p", InstanceTypes: []solver.InstanceTypeOption{
			{Type: m5, Offerings: []catalog.Offering{
				{Zone: "us-east-1a", CapacityType: "reserved", Price: catalog.ReservedPrice(m5), Available: true, ReservationID: id},
				{Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.096, Available: true},
			}},
			{Type: c6a, Offerings: []catalog.Offering{{Zone: "us-east-1b", CapacityType: "spot", Price: 0.029, Available: true}}},
		}}
	}
	cases := []struct {
		name     string
		claims   []solver.NewNodeClaim
		budget   map[string]int
		moved    int
		reserved []bool // per claim: still launches on its reservation
		left     map[string]int
	}{
		{"within the reservation", []solver.NewNodeClaim{reserved("cr-a"), reserved("cr-a")}, map[string]int{"cr-a": 3},
			0, []bool{true, true}, map[string]int{"cr-a": 1}},
		{"one more than it holds: the last moves", []solver.NewNodeClaim{reserved("cr-a"), reserved("cr-a"), reserved("cr-a"), reserved("cr-a")},
			map[string]int{"cr-a": 3}, 1, []bool{true, true, true, false}, map[string]int{"cr-a": 0}},
		{"used up", []solver.NewNodeClaim{reserved("cr-a")}, map[string]int{}, 1, []bool{false}, map[string]int{}},
		{"two reservations counted apart", []solver.NewNodeClaim{reserved("cr-a"), reserved("cr-b"), reserved("cr-b")},
			map[string]int{"cr-a": 1, "cr-b": 1}, 1, []bool{true, true, false}, map[string]int{"cr-a": 0, "cr-b": 0}},
		{"no reservation in the plan", []solver.NewNodeClaim{{NodePool: "p", InstanceTypes: []solver.InstanceTypeOption{spot}}},
			map[string]int{"cr-a": 1}, 0, []bool{false}, map[string]int{"cr-a": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := CapReservations(c.claims, c.budget); n != c.moved {
				t.Errorf("%d NodeClaims moved off a reservation, want %d", n, c.moved)
			}
			for i, want := range c.reserved {
				first := c.claims[i].InstanceTypes[0]
				o := solver.CheapestOffering(first.Offerings)
				if got := o.Available && o.CapacityType == "reserved"; got != want {
					t.Errorf("claim %d launches reserved: %v, want %v (first %s %+v)", i, got, want, first.Type.Name, o)
				}
				if !want && len(c.claims[i].InstanceTypes) > 1 && first.Type.Name != "c6a.large" {
					t.Errorf("claim %d not re-sorted: first %s", i, first.Type.Name)
				}
			}
			for id, n := range c.left {
				if c.budget[id] != n {
					t.Errorf("%s left %d, want %d", id, c.budget[id], n)
				}
			}
		})
	}
}
