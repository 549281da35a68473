package disruption

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// opt is an instance type with offerings "ct@zone=price".
func opt(name string, offs ...string) solver.InstanceTypeOption {
	o := solver.InstanceTypeOption{Type: &catalog.InstanceType{Name: name, Arch: "amd64"}}
	for _, s := range offs {
		var ct, zone string
		var price float64
		if _, err := fmt.Sscanf(strings.NewReplacer("@", " ", "=", " ").Replace(s), "%s %s %g", &ct, &zone, &price); err != nil {
			panic(s)
		}
		o.Offerings = append(o.Offerings, catalog.Offering{CapacityType: ct, Zone: zone, Price: price, Available: true})
	}
	return o
}

func capacity(values ...string) apiv1.NodeSelectorRequirementWithMinValues {
	return apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: values}
}

func replaced(capacityType, instanceType string, price float64) Candidate {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-" + instanceType, Labels: map[string]string{
		apiv1.LabelCapacityType: capacityType, apiv1.LabelInstanceType: instanceType}}}
	return Candidate{Node: node, Price: price, Pods: 3}
}

func newClaim(reqs []apiv1.NodeSelectorRequirementWithMinValues, types ...solver.InstanceTypeOption) *solver.NewNodeClaim {
	var req resources.List
	req[resources.CPU], req[resources.Pods] = 2500, 3
	return &solver.NewNodeClaim{NodePool: "general-purpose", Pods: []string{"default/a", "default/b", "default/c"},
		Requirements: reqs, InstanceTypes: types, Requests: req}
}

// Only types whose worst-case launch price (the dearest offering of the
// capacity type it launches as) is below the candidates' price are kept:
// equal is not cheaper, and a cheap zone does not hide a dear one.
func TestReplacementIsStrictlyCheaperAtItsWorstLaunchPrice(t *testing.T) {
	nn := newClaim([]apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeOnDemand)},
		opt("c6a.large", "on-demand@us-east-1a=0.0765", "on-demand@us-east-1b=0.0765"),
		opt("m6a.large", "on-demand@us-east-1a=0.15", "on-demand@us-east-1b=0.21"), // cheap in 1a, dearer than the node in 1b
		opt("m6i.large", "on-demand@us-east-1a=0.192"),                             // exactly the node's price
		opt("r6a.large", "on-demand@us-east-1a=0.1134"),
	)
	r, why := replacementFor([]Candidate{replaced(apiv1.CapacityTypeOnDemand, "m6i.xlarge", 0.192)}, nn, false)
	if r == nil {
		t.Fatalf("no replacement: %s", why)
	}
	if want := []string{"c6a.large", "r6a.large"}; !reflect.DeepEqual(r.InstanceTypes, want) {
		t.Errorf("instance types %v, want %v", r.InstanceTypes, want)
	}
	if r.USDPerHour != 0.0765 || r.MaxUSDPerHour != 0.1134 || r.Pods != 3 || r.NodePool != "general-purpose" {
		t.Errorf("plan %+v", r)
	}
	if r.Requests["cpu"] != "2500m" || r.Requests["pods"] != "3" {
		t.Errorf("requests %v", r.Requests)
	}
	if want := []saga.Requirement{{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}}}; !reflect.DeepEqual(r.Requirements, want) {
		t.Errorf("requirements %+v (on-demand only is not pinned to spot)", r.Requirements)
	}
	if len(r.Offerings) != 3 || r.Offerings[0] != (saga.Offering{InstanceType: "c6a.large", Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.0765}) ||
		r.Offerings[2].InstanceType != "r6a.large" {
		t.Errorf("offerings %+v", r.Offerings)
	}
	// Nothing below the node's price: no replacement.
	r, why = replacementFor([]Candidate{replaced(apiv1.CapacityTypeOnDemand, "c6a.large", 0.0765)}, nn, false)
	if r != nil || !strings.HasPrefix(why, "can't replace with a cheaper node") {
		t.Errorf("replacement %+v, why %q", r, why)
	}
}

// A replacement that may be spot or on-demand is pinned to spot (priced
// and launched as spot), so a spot shortage cannot buy a dearer on-demand
// node; a type without a spot offering is dropped.
func TestReplacementAllowingBothCapacityTypesIsPinnedToSpot(t *testing.T) {
	nn := newClaim([]apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand),
		{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}}},
		opt("c6a.large", "on-demand@us-east-1a=0.0765", "spot@us-east-1a=0.03", "spot@us-east-1b=0.034"),
		opt("c7i.large", "on-demand@us-east-1a=0.0893"), // no spot offering
		opt("m6a.large", "on-demand@us-east-1a=0.0864", "spot@us-east-1a=0.04"),
	)
	r, why := replacementFor([]Candidate{replaced(apiv1.CapacityTypeOnDemand, "m6a.xlarge", 0.1728)}, nn, false)
	if r == nil {
		t.Fatalf("no replacement: %s", why)
	}
	if want := []string{"c6a.large", "m6a.large"}; !reflect.DeepEqual(r.InstanceTypes, want) {
		t.Errorf("instance types %v, want %v", r.InstanceTypes, want)
	}
	for _, o := range r.Offerings {
		if o.CapacityType != apiv1.CapacityTypeSpot {
			t.Errorf("offering %+v is not spot", o)
		}
	}
	want := []saga.Requirement{{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeSpot}}}
	if !reflect.DeepEqual(r.Requirements, want) {
		t.Errorf("requirements %+v, want %+v", r.Requirements, want)
	}
	if r.USDPerHour != 0.03 || r.MaxUSDPerHour != 0.04 {
		t.Errorf("prices %v / %v, want 0.03 / 0.04 (spot, worst zone)", r.USDPerHour, r.MaxUSDPerHour)
	}
}

// spotTypes are n spot types priced 0.01, 0.02, ...
func spotTypes(n int) []solver.InstanceTypeOption {
	var out []solver.InstanceTypeOption
	for i := 1; i <= n; i++ {
		out = append(out, opt(fmt.Sprintf("c6a.t%02d", i), fmt.Sprintf("spot@us-east-1a=%g", 0.01*float64(i))))
	}
	return out
}

// Spot-to-spot consolidation (every candidate spot, the replacement may be
// spot) is behind the SpotToSpotConsolidation gate, off by default; on,
// single-node needs 15 cheaper types and launches only the 15 cheapest (or
// what minValues needs), multi-node has no such rule.
func TestSpotToSpotConsolidationGate(t *testing.T) {
	spot := []apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand)}
	one := []Candidate{replaced(apiv1.CapacityTypeSpot, "m6a.2xlarge", 0.5)}
	two := []Candidate{replaced(apiv1.CapacityTypeSpot, "m6a.2xlarge", 0.25), replaced(apiv1.CapacityTypeSpot, "m6a.xlarge", 0.25)}
	instanceTypeMin := func(n int) apiv1.NodeSelectorRequirementWithMinValues {
		return apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelInstanceType, Operator: apiv1.OpExists, MinValues: &n}
	}
	cases := []struct {
		name   string
		cands  []Candidate
		reqs   []apiv1.NodeSelectorRequirementWithMinValues
		types  []solver.InstanceTypeOption
		gate   bool
		launch int    // instance types launched (0: no replacement)
		why    string // prefix, when no replacement
	}{
		{"off: a spot node is not replaced by spot", one, spot, spotTypes(30), false, 0, "SpotToSpotConsolidation is disabled"},
		{"off: nor are several", two, spot, spotTypes(30), false, 0, "SpotToSpotConsolidation is disabled"},
		{"off: an on-demand-only replacement is not spot-to-spot", one, []apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeOnDemand)},
			[]solver.InstanceTypeOption{opt("c6a.large", "on-demand@us-east-1a=0.0765")}, false, 1, ""},
		{"on, single-node: 14 cheaper types are too few", one, spot, spotTypes(14), true, 0, "SpotToSpotConsolidation requires 15 cheaper instance type options"},
		{"on, single-node: 15 cheaper types are enough", one, spot, spotTypes(15), true, 15, ""},
		{"on, single-node: cut to the 15 cheapest", one, spot, spotTypes(49), true, 15, ""}, // 0.49 < 0.5
		{"on, single-node: types at or above the node's price do not count", one, spot, spotTypes(60), true, 15, ""},
		{"on, single-node: minValues needs more than 15", one, append([]apiv1.NodeSelectorRequirementWithMinValues{instanceTypeMin(20)}, spot...), spotTypes(30), true, 20, ""},
		{"on, single-node: minValues not met below the price", one, append([]apiv1.NodeSelectorRequirementWithMinValues{instanceTypeMin(50)}, spot...), spotTypes(60), true, 0, "can't replace with a cheaper node"},
		{"on, multi-node: no 15-type rule", two, spot, spotTypes(3), true, 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, why := replacementFor(c.cands, newClaim(c.reqs, c.types...), c.gate)
			if c.launch == 0 {
				if r != nil || !strings.HasPrefix(why, c.why) {
					t.Fatalf("replacement %v, why %q; want none, why %q...", r, why, c.why)
				}
				return
			}
			if r == nil {
				t.Fatalf("no replacement: %s", why)
			}
			if len(r.InstanceTypes) != c.launch {
				t.Fatalf("launches %d types %v, want %d", len(r.InstanceTypes), r.InstanceTypes, c.launch)
			}
			if c.gate && (r.InstanceTypes[0] != "c6a.t01" || r.InstanceTypes[len(r.InstanceTypes)-1] != fmt.Sprintf("c6a.t%02d", c.launch)) {
				t.Errorf("not the cheapest: %v", r.InstanceTypes)
			}
			if c.gate && r.Requirements[len(r.Requirements)-1].Values[0] != apiv1.CapacityTypeSpot {
				t.Errorf("spot-to-spot not pinned to spot: %+v", r.Requirements)
			}
		})
	}
}

// Multi-node (Karpenter's filterOutSameInstanceType): when a candidate's
// own type is among the options, only types cheaper than that candidate
// stay; if none, the move is refused (deleting fewer nodes is better).
func TestMultiNodeReplacementIsNotACandidatesOwnType(t *testing.T) {
	od := []apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeOnDemand)}
	cands := []Candidate{replaced(apiv1.CapacityTypeOnDemand, "m6a.xlarge", 0.1728), replaced(apiv1.CapacityTypeOnDemand, "m6a.large", 0.0864)}
	nn := newClaim(od, opt("c6a.large", "on-demand@us-east-1a=0.0765"), opt("m6a.large", "on-demand@us-east-1a=0.0864"),
		opt("c6a.xlarge", "on-demand@us-east-1a=0.153"))
	r, why := replacementFor(cands, nn, false)
	if r == nil || !reflect.DeepEqual(r.InstanceTypes, []string{"c6a.large"}) {
		t.Fatalf("replacement %+v (%s), want c6a.large only", r, why)
	}
	nn = newClaim(od, opt("m6a.large", "on-demand@us-east-1a=0.0864"), opt("c6a.xlarge", "on-demand@us-east-1a=0.153"))
	if r, why := replacementFor(cands, nn, false); r != nil || !strings.HasPrefix(why, "the replacement would be a candidate's own type or dearer") {
		t.Fatalf("replacement %+v, why %q", r, why)
	}
	// Single-node has no such rule (the price rule already excludes its own type).
	if r, _ := replacementFor(cands[:1], nn, false); r == nil || !reflect.DeepEqual(r.InstanceTypes, []string{"m6a.large", "c6a.xlarge"}) {
		t.Fatalf("single-node replacement %+v", r)
	}
}

// The validation and the re-check before acting require the same shape
// and the decided types among the fresh options, still cheaper.
func TestResimulatedRequiresTheSameShape(t *testing.T) {
	plan := &saga.Replacement{InstanceTypes: []string{"c6a.large", "m6a.large"}, USDPerHour: 0.03, MaxUSDPerHour: 0.05}
	replace := saga.DisruptionDecision{Method: saga.MethodSingleNode, Replacement: plan, Replace: true}
	del := saga.DisruptionDecision{Method: saga.MethodMultiNode}
	fresh := func(total float64, types ...string) solver.RemovalResult {
		nn := &solver.NewNodeClaim{}
		for _, t := range types {
			nn.InstanceTypes = append(nn.InstanceTypes, opt(t, "spot@us-east-1a=0.03"))
		}
		return solver.RemovalResult{Possible: true, Replacement: nn, CandidatesUSDPerHour: total, SavingUSDPerHour: total - 0.03}
	}
	deletion := solver.RemovalResult{Possible: true, CandidatesUSDPerHour: 0.2, SavingUSDPerHour: 0.2}
	cases := []struct {
		name string
		d    saga.DisruptionDecision
		r    solver.RemovalResult
		want saga.Validation
	}{
		{"deletion stays a deletion", del, deletion, saga.Validation{Valid: true}},
		{"deletion now needs a node", del, fresh(0.2, "c6a.large"), saga.Validation{Why: "the pods now need a new node: the deletion became a replacement"}},
		{"replacement no longer needed", replace, deletion, saga.Validation{Why: "the pods now fit without a new node: a deletion would do"}},
		{"same replacement, more options", replace, fresh(0.1728, "c6a.large", "m6a.large", "m6i.large"), saga.Validation{Valid: true}},
		{"a decided type is no longer an option", replace, fresh(0.1728, "c6a.large"),
			saga.Validation{Why: "the replacement changed: instance type m6a.large is no longer an option"}},
		{"the nodes got cheaper than the replacement", replace, fresh(0.05, "c6a.large", "m6a.large"),
			saga.Validation{Why: "no longer cheaper: the replacement may cost 0.0500 USD/hour, the nodes 0.0500"}},
		{"not possible", replace, solver.RemovalResult{Reason: "pod default/a cannot move: no room"},
			saga.Validation{Why: "no longer possible: pod default/a cannot move: no room"}},
	}
	for _, c := range cases {
		if got := Resimulated(c.d, c.r); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A replacement that can go into a capacity reservation is pinned to
// reserved, as Karpenter's scheduler pins a NodeClaim that took one: a full
// reservation fails the launch rather than buying a dearer node.
func TestReplacementWithAReservationIsPinnedToReserved(t *testing.T) {
	m5 := opt("m5.large", "on-demand@us-east-1a=0.096", "spot@us-east-1a=0.04")
	m5.Offerings = append(m5.Offerings, catalog.Offering{CapacityType: "reserved", Zone: "us-east-1a", Price: 0.096 / 1e7, Available: true, ReservationID: "cr-1"})
	nn := newClaim([]apiv1.NodeSelectorRequirementWithMinValues{capacity(apiv1.CapacityTypeReserved, apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand)},
		m5, opt("c6a.large", "spot@us-east-1b=0.03"))
	r, why := replacementFor([]Candidate{replaced(apiv1.CapacityTypeOnDemand, "m6a.xlarge", 0.1728)}, nn, false)
	if r == nil {
		t.Fatalf("no replacement: %s", why)
	}
	if !reflect.DeepEqual(r.InstanceTypes, []string{"m5.large"}) || len(r.Offerings) != 1 ||
		r.Offerings[0] != (saga.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "reserved", Price: 0.096 / 1e7, ReservationID: "cr-1"}) {
		t.Errorf("replacement %v %+v, want m5.large reserved in cr-1 only", r.InstanceTypes, r.Offerings)
	}
	if want := []saga.Requirement{{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeReserved}}}; !reflect.DeepEqual(r.Requirements, want) {
		t.Errorf("requirements %+v, want capacity type reserved", r.Requirements)
	}
}
