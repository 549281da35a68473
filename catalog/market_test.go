package catalog

import (
	"reflect"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

func TestMarketOfferings(t *testing.T) {
	cat := MustDefault()
	c6a, _ := cat.Get("c6a.large")   // on-demand 0.0765, static spot 0.02907
	c6in, _ := cat.Get("c6in.large") // on-demand 0.1134, static spot 0.044226
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}

	// No market, or one without data: the static offerings.
	var none *Market
	if got, want := none.Offerings(c6a, zones), c6a.Offerings(zones); !reflect.DeepEqual(got, want) {
		t.Errorf("nil market = %+v, want %+v", got, want)
	}
	m := NewMarket()
	if got, want := m.Offerings(c6a, zones), c6a.Offerings(zones); !reflect.DeepEqual(got, want) {
		t.Errorf("empty market = %+v, want %+v", got, want)
	}

	m.SetZones(map[string][]string{"c6in.large": {"us-east-1b", "us-east-1c"}, "m5.large": {"us-east-1a"}})
	m.SetSpotPrices(map[string]map[string]float64{"c6in.large": {"us-east-1b": 0.04, "us-east-1c": 0.05}})
	want := []Offering{
		{Zone: "us-east-1b", CapacityType: apiv1.CapacityTypeOnDemand, Price: 0.1134, Available: true},
		{Zone: "us-east-1c", CapacityType: apiv1.CapacityTypeOnDemand, Price: 0.1134, Available: true},
		{Zone: "us-east-1b", CapacityType: apiv1.CapacityTypeSpot, Price: 0.04, Available: true},
		{Zone: "us-east-1c", CapacityType: apiv1.CapacityTypeSpot, Price: 0.05, Available: true},
	}
	if got := m.Offerings(c6in, zones); !reflect.DeepEqual(got, want) {
		t.Errorf("c6in.large = %+v, want %+v (not in 1a, spot per zone)", got, want)
	}
	if got := m.Offerings(c6in, []string{"us-east-1a"}); len(got) != 0 {
		t.Errorf("c6in.large in 1a = %+v, want none", got)
	}
	// A type EC2 did not list is not sold in the region.
	if got := m.Offerings(c6a, zones); len(got) != 0 {
		t.Errorf("unlisted c6a.large = %+v, want none", got)
	}
	if zt, st := m.Known(); zt != 2 || st != 1 {
		t.Errorf("Known() = %d, %d; want 2, 1", zt, st)
	}
	if p := m.Price(c6in, "us-east-1c", apiv1.CapacityTypeSpot); p != 0.05 {
		t.Errorf("spot price of c6in.large in 1c = %v, want 0.05", p)
	}
	if p := m.Price(c6in, "us-east-1a", apiv1.CapacityTypeSpot); p != 0.044226 {
		t.Errorf("spot price of c6in.large in 1a (no live price) = %v, want the static 0.044226", p)
	}
	if p := m.Price(c6in, "us-east-1b", apiv1.CapacityTypeOnDemand); p != 0.1134 {
		t.Errorf("on-demand price = %v, want 0.1134", p)
	}
	// Clearing: static again.
	m.SetZones(nil)
	m.SetSpotPrices(map[string]map[string]float64{})
	if got, want := m.Offerings(c6in, zones), c6in.Offerings(zones); !reflect.DeepEqual(got, want) {
		t.Errorf("cleared market = %+v, want %+v", got, want)
	}
}

func TestMarketZones(t *testing.T) {
	var nilMarket *Market
	if nilMarket.Zones() != nil || NewMarket().Zones() != nil {
		t.Error("zones without zone data")
	}
	m := NewMarket()
	m.SetZones(map[string][]string{"a.large": {"eu-west-1b", "eu-west-1a"}, "b.large": {"eu-west-1c", "eu-west-1a"}})
	if got := m.Zones(); len(got) != 3 || got[0] != "eu-west-1a" || got[2] != "eu-west-1c" {
		t.Errorf("zones %v", got)
	}
}
