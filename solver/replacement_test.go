package solver

import (
	"math"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// The worst-case launch price is the dearest offering of the capacity type
// a launch would use: spot before on-demand, whatever their prices.
func TestWorstLaunchPrice(t *testing.T) {
	od := func(z string, p float64) catalog.Offering {
		return catalog.Offering{Zone: z, CapacityType: apiv1.CapacityTypeOnDemand, Price: p, Available: true}
	}
	spot := func(z string, p float64) catalog.Offering {
		return catalog.Offering{Zone: z, CapacityType: apiv1.CapacityTypeSpot, Price: p, Available: true}
	}
	gone := spot("us-east-1c", 9)
	gone.Available = false
	cases := []struct {
		offs []catalog.Offering
		want float64
	}{
		{[]catalog.Offering{od("us-east-1a", 0.1), spot("us-east-1a", 0.03), spot("us-east-1b", 0.05), gone}, 0.05},
		{[]catalog.Offering{od("us-east-1a", 0.1), od("us-east-1b", 0.12)}, 0.12},
		{[]catalog.Offering{od("us-east-1a", 0.1), spot("us-east-1a", 0.2)}, 0.2}, // spot launches, even dearer
		{[]catalog.Offering{gone}, math.Inf(1)},
	}
	for i, c := range cases {
		if got := WorstLaunchPrice(c.offs); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestMinValuesNeeded(t *testing.T) {
	three, two := 3, 2
	it := func(name, family, zone string) InstanceTypeOption {
		return InstanceTypeOption{Type: &catalog.InstanceType{Name: name, Family: family},
			Offerings: []catalog.Offering{{Zone: zone, CapacityType: apiv1.CapacityTypeSpot, Available: true}}}
	}
	types := []InstanceTypeOption{it("c6a.large", "c6a", "us-east-1a"), it("c6a.xlarge", "c6a", "us-east-1a"),
		it("m6a.large", "m6a", "us-east-1b"), it("r6a.large", "r6a", "us-east-1a")}
	cases := []struct {
		reqs []apiv1.NodeSelectorRequirementWithMinValues
		n    int
		ok   bool
	}{
		{nil, 0, true},
		{[]apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpExists, MinValues: &three}}, 4, true},
		{[]apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelZone, Operator: apiv1.OpExists, MinValues: &two}}, 3, true},
		{[]apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"c6a", "m6a"}, MinValues: &three}}, 0, false},
	}
	for i, c := range cases {
		if n, ok := MinValuesNeeded(c.reqs, types); n != c.n || ok != c.ok {
			t.Errorf("case %d: %d %v, want %d %v", i, n, ok, c.n, c.ok)
		}
	}
}
