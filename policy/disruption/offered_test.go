package disruption

import (
	"strings"
	"testing"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
)

// offeredWorld is a live market of two types, m7i.large in zones a and b,
// c5.large (no nested virtualization) in a, and a class whose subnets
// cover a and b and which lists one reservation of m7i.large in a.
func offeredWorld() (*catalog.Market, *apiv1.EC2NodeClass) {
	m := catalog.NewMarket()
	m.SetTypes(catalog.New([]*catalog.InstanceType{
		{Name: "m7i.large", OnDemandPrice: 0.1, NestedVirtualization: true},
		{Name: "c5.large", OnDemandPrice: 0.08},
	}))
	m.SetZones(map[string][]string{"m7i.large": {"us-east-1a", "us-east-1b"}, "c5.large": {"us-east-1a"}})
	cls := &apiv1.EC2NodeClass{}
	cls.Name = "default"
	cls.Status.Subnets = []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}, {ID: "subnet-b", Zone: "us-east-1b"}}
	cls.Status.CapacityReservations = []apiv1.CapacityReservationStatus{{ID: "cr-1", InstanceType: "m7i.large", AvailabilityZone: "us-east-1a",
		State: apiv1.CapacityReservationStateActive}}
	return m, cls
}

func offeredClaim(typ, zone, ct, reservation string) *apiv1.NodeClaim {
	nc := &apiv1.NodeClaim{}
	nc.Name = "nc"
	nc.Labels = map[string]string{apiv1.LabelInstanceType: typ, apiv1.LabelZone: zone, apiv1.LabelCapacityType: ct}
	if reservation != "" {
		nc.Labels[apiv1.LabelCapacityReservationID] = reservation
	}
	return nc
}

func TestInstanceTypeDriftTypeZoneCapacityTypeReservation(t *testing.T) {
	m, cls := offeredWorld()
	cases := []struct {
		name  string
		claim *apiv1.NodeClaim
		want  string // "" no drift, else a fragment of the message
	}{
		{"offered on-demand", offeredClaim("m7i.large", "us-east-1b", apiv1.CapacityTypeOnDemand, ""), ""},
		{"offered spot", offeredClaim("c5.large", "us-east-1a", apiv1.CapacityTypeSpot, ""), ""},
		{"offered reserved", offeredClaim("m7i.large", "us-east-1a", apiv1.CapacityTypeReserved, "cr-1"), ""},
		{"type gone", offeredClaim("m5.large", "us-east-1a", apiv1.CapacityTypeOnDemand, ""),
			"instance type m5.large is no longer offered to EC2NodeClass default"},
		{"zone EC2 does not sell the type in", offeredClaim("c5.large", "us-east-1b", apiv1.CapacityTypeOnDemand, ""),
			"c5.large is no longer offered to EC2NodeClass default in zone us-east-1b as on-demand"},
		{"zone the subnets no longer cover", offeredClaim("m7i.large", "us-east-1c", apiv1.CapacityTypeSpot, ""), "in zone us-east-1c as spot"},
		{"capacity type gone (no reservation of the type)", offeredClaim("c5.large", "us-east-1a", apiv1.CapacityTypeReserved, ""),
			"in zone us-east-1a as reserved"},
		{"reserved offering gone", offeredClaim("m7i.large", "us-east-1a", apiv1.CapacityTypeReserved, "cr-2"),
			"as reserved (capacity reservation cr-2)"},
		{"no instance-type label", &apiv1.NodeClaim{}, "has no node.kubernetes.io/instance-type label"},
	}
	offered := ClassOfferings(cls, m)
	for _, c := range cases {
		got := InstanceTypeDrift(c.claim, offered, cls.Name)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Offerings only temporarily unavailable (the insufficient-capacity
// cache, a reservation with nothing left) are still offered: no drift.
func TestInstanceTypeDriftIgnoresAvailability(t *testing.T) {
	m, cls := offeredWorld()
	zero := int32(0)
	cls.Status.CapacityReservations[0].AvailableInstanceCount = &zero
	offered := ClassOfferings(cls, m)
	for _, nc := range []*apiv1.NodeClaim{
		offeredClaim("m7i.large", "us-east-1a", apiv1.CapacityTypeSpot, ""),
		offeredClaim("m7i.large", "us-east-1a", apiv1.CapacityTypeReserved, "cr-1"),
	} {
		if why := InstanceTypeDrift(nc, offered, cls.Name); why != "" {
			t.Errorf("%v drifted: %s", nc.Labels, why)
		}
	}
	// Offerings marked unavailable in the map itself do not drift either.
	for i := range offered["m7i.large"] {
		offered["m7i.large"][i].Available = false
	}
	if why := InstanceTypeDrift(offeredClaim("m7i.large", "us-east-1b", apiv1.CapacityTypeOnDemand, ""), offered, cls.Name); why != "" {
		t.Errorf("unavailable offering drifted: %s", why)
	}
}

// Unknown is never a drift: no live types yet (the embedded catalog is
// not asked), or the class's subnets not resolved.
func TestClassOfferingsUnknownDriftsNothing(t *testing.T) {
	_, cls := offeredWorld()
	if o := ClassOfferings(cls, catalog.NewMarket()); o != nil {
		t.Errorf("no live types: %v, want nil", o)
	}
	if o := ClassOfferings(cls, nil); o != nil {
		t.Errorf("nil market: %v, want nil", o)
	}
	m, bare := offeredWorld()
	bare.Status.Subnets = nil
	if o := ClassOfferings(bare, m); o != nil {
		t.Errorf("no subnets: %v, want nil", o)
	}
	if why := InstanceTypeDrift(offeredClaim("gone.large", "us-east-1a", apiv1.CapacityTypeOnDemand, ""), nil, "default"); why != "" {
		t.Errorf("nil Offered drifted: %s", why)
	}
}

// A type the class can no longer launch (nested virtualization enabled,
// a prefix count the type cannot take) is not offered.
func TestClassOfferingsLeaveOutUnlaunchableTypes(t *testing.T) {
	m, cls := offeredWorld()
	on := apiv1.NestedVirtualizationEnabled
	cls.Spec.CPUOptions = &apiv1.CPUOptions{NestedVirtualization: &on}
	offered := ClassOfferings(cls, m)
	if _, ok := offered["c5.large"]; ok {
		t.Error("c5.large offered to a nested-virtualization class")
	}
	why := InstanceTypeDrift(offeredClaim("c5.large", "us-east-1a", apiv1.CapacityTypeOnDemand, ""), offered, cls.Name)
	if why != "instance type c5.large is no longer offered to EC2NodeClass default" {
		t.Errorf("unlaunchable type: %q", why)
	}
	if why := InstanceTypeDrift(offeredClaim("m7i.large", "us-east-1a", apiv1.CapacityTypeOnDemand, ""), offered, cls.Name); why != "" {
		t.Errorf("m7i.large drifted: %s", why)
	}
}

// Karpenter's order: NodePoolDrifted, RequirementsDrifted, then
// InstanceTypeNotFound, then the class's own (NodeClassDrift, AMIDrift...).
func TestDriftOrderInstanceTypeNotFound(t *testing.T) {
	m, cls := offeredWorld()
	pool := hashPool()
	claim := stamped(pool, NodePoolHashVersion)
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	for k, v := range offeredClaim("m5.large", "us-east-1a", apiv1.CapacityTypeOnDemand, "").Labels {
		claim.Labels[k] = v
	}
	claim.Labels[apiv1.LabelArch] = "amd64"
	claim.Labels["team"] = "a"
	claim.Annotations[AnnotationNodeClassHash] = "another-class-hash" // NodeClassDrift too
	offered := ClassOfferings(cls, m)

	r, msg := Drift(claim, nil, pool, cls, offered, nodeclass.Launched{})
	if r != ReasonInstanceTypeNotFound || msg != "instance type m5.large is no longer offered to EC2NodeClass default" {
		t.Fatalf("got %s %q, want %s before %s", r, msg, ReasonInstanceTypeNotFound, ReasonNodeClassDrift)
	}
	if r, _ := Drift(claim, nil, pool, cls, nil, nodeclass.Launched{}); r != ReasonNodeClassDrift {
		t.Errorf("catalog unknown: %s, want %s", r, ReasonNodeClassDrift)
	}
	pool.Spec.Template.Spec.Requirements[0].Values = []string{"arm64"}
	if r, _ := Drift(claim, nil, pool, cls, offered, nodeclass.Launched{}); r != ReasonRequirementsDrifted {
		t.Errorf("requirements drift too: %s, want %s first", r, ReasonRequirementsDrifted)
	}
	pool.Spec.Template.ObjectMeta.Labels["team"] = "b"
	if r, _ := Drift(claim, nil, pool, cls, offered, nodeclass.Launched{}); r != ReasonNodePoolDrifted {
		t.Errorf("static drift too: %s, want %s first", r, ReasonNodePoolDrifted)
	}
	if r, _ := Drift(claim, nil, pool, nil, offered, nodeclass.Launched{}); r != ReasonNodePoolDrifted {
		t.Errorf("class gone: %s", r)
	}
}

// A consolidation pass drifts on its candidates' Offered: the node whose
// type the class no longer offers is replaced, counted as eligible for
// drift; without Offered (catalog not known) nothing is.
func TestDriftDecisionOnInstanceTypeNotFound(t *testing.T) {
	m, cls := offeredWorld()
	pool := testPool("a")
	mk := func(i int, typ string, offered Offered) Candidate {
		node, nc := testClaim(i, pool)
		nc.Labels = offeredClaim(typ, "us-east-1a", apiv1.CapacityTypeOnDemand, "").Labels
		return Candidate{Node: node, Claim: nc, Pool: pool, Class: cls, Offered: offered, Price: 0.1, Pods: 1}
	}
	pass := func(cs ...Candidate) *Pass {
		return &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{"a": {Nodes: len(cs)}},
			Simulate: func([]string) solver.RemovalResult { return solver.RemovalResult{Reason: "no room"} }}
	}
	offered := ClassOfferings(cls, m)
	p := pass(mk(0, "m7i.large", offered), mk(1, "m5.large", offered))
	d, ok := DriftDecision(p)
	if !ok || d.Nodes[0] != "ip-10-0-0-11.ec2.internal" || !strings.Contains(d.Why, "m5.large is no longer offered") {
		t.Fatalf("decision %+v, want the m5.large node", d)
	}
	if n := EligibleByReason(p)[saga.ReasonDrifted]; n != 1 {
		t.Errorf("eligible for drift: %d, want 1", n)
	}
	if d, ok := DriftDecision(pass(mk(0, "m7i.large", nil), mk(1, "m5.large", nil))); ok {
		t.Errorf("drifted without a known catalog: %+v", d)
	}
}
