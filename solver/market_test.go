package solver

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"sigs.k8s.io/yaml"
)

// marketPool builds a solver NodePool from YAML with offerings from market.
func marketPool(t *testing.T, y string, market *catalog.Market) NodePool {
	t.Helper()
	np := &apiv1.NodePool{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(y, "\t", "  ")), np); err != nil {
		t.Fatalf("NodePool YAML: %v", err)
	}
	return NodePoolFromMarket(np, nil, catalog.MustDefault(), market, catalog.DefaultZones, nil)
}

func offeringZones(o InstanceTypeOption) map[string]bool {
	out := map[string]bool{}
	for _, of := range o.Offerings {
		out[of.Zone] = true
	}
	return out
}

// A type the market says a zone does not sell has no offering there, so a
// pod pinned to that zone gets the cheapest type the zone sells.
// On-demand: c6a.large 0.0765, c6i.large 0.085, c7i.large 0.08925.
func TestMarketZoneNotOffered(t *testing.T) {
	const y = `
metadata: {name: od}
spec:
	template:
		spec:
			nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
			requirements:
				- {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
				- {key: node.kubernetes.io/instance-type, operator: In, values: [c6a.large, c6i.large, c7i.large]}
`
	m := catalog.NewMarket()
	m.SetZones(map[string][]string{
		"c6a.large": {"us-east-1b", "us-east-1c"},
		"c6i.large": {"us-east-1a", "us-east-1b", "us-east-1c"},
		"c7i.large": {"us-east-1a", "us-east-1b", "us-east-1c"},
	})
	pool := marketPool(t, y, m)
	for _, o := range pool.InstanceTypes {
		z := offeringZones(o)
		if o.Type.Name == "c6a.large" && (z["us-east-1a"] || len(o.Offerings) != 2) {
			t.Errorf("c6a.large offerings %+v, want on-demand in 1b and 1c only", o.Offerings)
		}
		if o.Type.Name != "c6a.large" && len(o.Offerings) != 3 {
			t.Errorf("%s offerings %+v, want on-demand in 3 zones", o.Type.Name, o.Offerings)
		}
	}

	pin := func(name, zone string) Pod {
		p := pod(name, 1000, 1024)
		p.NodeSelector = map[string]string{apiv1.LabelZone: zone}
		return p
	}
	in := Input{Pods: []Pod{pin("in-1a", "us-east-1a"), pin("in-1b", "us-east-1b")}, NodePools: []NodePool{pool}, Budget: -1}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	for _, c := range []struct {
		pod, zone, first string
		price            float64
	}{
		{"default/in-1a", "us-east-1a", "c6i.large", 0.085},
		{"default/in-1b", "us-east-1b", "c6a.large", 0.0765},
	} {
		nc := claimOf(&plan, c.pod)
		if nc == nil {
			t.Fatalf("%s not on a new claim: %+v", c.pod, plan.Unschedulable)
		}
		best := CheapestOffering(nc.InstanceTypes[0].Offerings)
		if nc.InstanceTypes[0].Type.Name != c.first || best.Zone != c.zone || best.Price != c.price {
			t.Errorf("%s: first type %s at %v in %s, want %s at %v in %s", c.pod, nc.InstanceTypes[0].Type.Name, best.Price, best.Zone, c.first, c.price, c.zone)
		}
		for _, it := range nc.InstanceTypes {
			for _, o := range it.Offerings {
				if o.Zone != c.zone {
					t.Errorf("%s: %s offers %s, pinned to %s", c.pod, it.Type.Name, o.Zone, c.zone)
				}
			}
			if c.zone == "us-east-1a" && it.Type.Name == "c6a.large" {
				t.Errorf("%s: c6a.large listed for 1a, which does not sell it", c.pod)
			}
		}
	}
	// Without the market (static data) the 1a pod would get c6a.large.
	static := Solve(Input{Pods: in.Pods[:1], NodePools: []NodePool{poolYAML(t, y)}, Budget: -1})
	if nc := claimOf(&static, "default/in-1a"); nc == nil || nc.InstanceTypes[0].Type.Name != "c6a.large" {
		t.Errorf("static plan for the 1a pod: %+v, want c6a.large", nc)
	}
}

// Zone-free spot pods plan in the zone where the chosen type's spot price
// is lowest, and the next plan follows the market when the price moves.
func TestMarketSpotZone(t *testing.T) {
	const y = `
metadata: {name: spot}
spec:
	template:
		spec:
			nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
			requirements:
				- {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
				- {key: node.kubernetes.io/instance-type, operator: In, values: [c6a.large]}
`
	m := catalog.NewMarket()
	m.SetSpotPrices(map[string]map[string]float64{"c6a.large": {"us-east-1a": 0.0300, "us-east-1b": 0.0250, "us-east-1c": 0.0310}})
	plan := func() (string, float64, int) {
		in := Input{Pods: pods("web", 3, 500, 512), NodePools: []NodePool{marketPool(t, y, m)}, Budget: -1}
		p := Solve(in)
		checkPlanInvariants(t, in, &p)
		if len(p.NewNodeClaims) == 0 {
			t.Fatalf("no claim: %+v", p.Unschedulable)
		}
		zones := map[string]bool{}
		var total float64
		for _, nc := range p.NewNodeClaims {
			o := CheapestOffering(nc.InstanceTypes[0].Offerings)
			zones[o.Zone] = true
			total += o.Price
		}
		if len(zones) != 1 {
			t.Fatalf("claims in zones %v, want one", zones)
		}
		for z := range zones {
			return z, total, len(p.NewNodeClaims)
		}
		return "", 0, 0
	}
	// 3 pods of 500m, 512Mi (1500m) fit one c6a.large (1930m allocatable):
	// one claim, at the zone's spot price.
	if z, price, n := plan(); z != "us-east-1b" || price != 0.0250 || n != 1 {
		t.Errorf("plan: %d claim(s) in %s at %v, want 1 in us-east-1b at 0.025", n, z, price)
	}
	// 1b's price rises above 1a's: the next plan goes to 1a.
	m.SetSpotPrices(map[string]map[string]float64{"c6a.large": {"us-east-1a": 0.0300, "us-east-1b": 0.0350, "us-east-1c": 0.0310}})
	if z, price, n := plan(); z != "us-east-1a" || price != 0.0300 || n != 1 {
		t.Errorf("plan after the move: %d claim(s) in %s at %v, want 1 in us-east-1a at 0.03", n, z, price)
	}
}

// Reserved offerings join a pool only when its capacity-type requirement
// admits reserved; then they are the cheapest (on-demand / 1e7), so the
// plan's first NodeClaims go to the reservation.
func TestReservedOfferingsNeedThePoolToAdmitThem(t *testing.T) {
	three := int32(3)
	nc := &apiv1.EC2NodeClass{}
	nc.Status.CapacityReservations = []apiv1.CapacityReservationStatus{{ID: "cr-0123", InstanceType: "m5.large",
		AvailabilityZone: "us-east-1a", InstanceMatchCriteria: "targeted", State: "active", AvailableInstanceCount: &three}}
	pool := func(values string) NodePool {
		np := &apiv1.NodePool{}
		y := `
metadata: {name: p}
spec:
	template:
		spec:
			nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
			requirements:
				- {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, c6a.large]}
` + values
		if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(y, "\t", "  ")), np); err != nil {
			t.Fatal(err)
		}
		return NodePoolFromMarket(np, nc, catalog.MustDefault(), catalog.NewMarket(), catalog.DefaultZones, nil)
	}
	reserved := func(p NodePool) int {
		n := 0
		for _, it := range p.InstanceTypes {
			for _, o := range it.Offerings {
				if o.CapacityType == apiv1.CapacityTypeReserved {
					n++
					if it.Type.Name != "m5.large" || o.Zone != "us-east-1a" || o.ReservationID != "cr-0123" || !o.Available {
						t.Errorf("reserved offering %s %+v", it.Type.Name, o)
					}
				}
			}
		}
		return n
	}
	for _, c := range []struct {
		reqs string
		want int
	}{
		{"", 0}, // no capacity-type requirement: no reservations
		{"\t\t\t\t- {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}\n", 0},
		{"\t\t\t\t- {key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}\n", 1},
		{"\t\t\t\t- {key: karpenter.sh/capacity-type, operator: NotIn, values: [spot]}\n", 1},
		{"\t\t\t\t- {key: karpenter.sh/capacity-type, operator: Exists}\n", 1},
	} {
		if got := reserved(pool(c.reqs)); got != c.want {
			t.Errorf("requirements %q: %d reserved offerings, want %d", c.reqs, got, c.want)
		}
	}
	p := pool("\t\t\t\t- {key: karpenter.sh/capacity-type, operator: In, values: [reserved, spot, on-demand]}\n")
	in := Input{Pods: []Pod{pod("a", 1500, 1024)}, NodePools: []NodePool{p}, Budget: -1}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	first := CheapestOffering(plan.NewNodeClaims[0].InstanceTypes[0].Offerings)
	if plan.NewNodeClaims[0].InstanceTypes[0].Type.Name != "m5.large" || first.CapacityType != "reserved" || first.ReservationID != "cr-0123" {
		t.Errorf("first option %s %+v, want m5.large reserved in cr-0123", plan.NewNodeClaims[0].InstanceTypes[0].Type.Name, first)
	}
	// A pod selecting the reservation by its label lands on it.
	sel := pod("b", 500, 512)
	sel.NodeSelector = map[string]string{apiv1.LabelCapacityReservationID: "cr-0123"}
	in = Input{Pods: []Pod{sel}, NodePools: []NodePool{p}, Budget: -1}
	plan = Solve(in)
	if len(plan.NewNodeClaims) != 1 || len(plan.NewNodeClaims[0].InstanceTypes) != 1 || len(plan.NewNodeClaims[0].InstanceTypes[0].Offerings) != 1 {
		t.Errorf("pod selecting cr-0123: plan %+v", plan)
	}
}
