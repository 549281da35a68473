package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
)

// subnetOf is the sim's subnet of a zone.
func subnetOf(t *testing.T, a *Activities, zone string) string {
	t.Helper()
	cls, err := a.Launch.cluster.NodeClass("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cls.Status.Subnets {
		if s.Zone == zone {
			return s.ID
		}
	}
	t.Fatalf("no subnet in %s", zone)
	return ""
}

// An m5.large with 20 pods takes 30 addresses (3 ENIs of 10): a zone whose
// subnet has 29 is left out of the CreateFleet call and of plans for a
// while (the ICE cache), and the node goes to the other zone; with no other
// zone the launch fails as for insufficient capacity, naming the subnet.
func TestLaunchLeavesOutAZoneShortOfAddresses(t *testing.T) {
	a, srv, req := launchWorldDeps(t, nil, func(d *Deps) { d.ICE = aws.NewICECache(time.Hour, time.Now) })
	zoneA, zoneB := "us-east-1a", "us-east-1b"
	if err := srv.SetSubnetAvailable(subnetOf(t, a, zoneA), 29); err != nil {
		t.Fatal(err)
	}
	req.Pods = 20
	req.Offerings = []saga.Offering{
		{InstanceType: "m5.large", Zone: zoneA, CapacityType: apiv1.CapacityTypeOnDemand},
		{InstanceType: "m5.large", Zone: zoneB, CapacityType: apiv1.CapacityTypeOnDemand},
	}
	inst, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Zone != zoneB || inst.SubnetID != subnetOf(t, a, zoneB) {
		t.Errorf("launched in %s (%s), want %s: %s's subnet holds 29 of the 30 addresses", inst.Zone, inst.SubnetID, zoneB, zoneA)
	}
	if !a.Launch.ice.Unavailable("m5.large", zoneA, apiv1.CapacityTypeOnDemand) {
		t.Error("m5.large in the short zone is not left out of plans")
	}
	if a.Launch.ice.Unavailable("m5.large", zoneB, apiv1.CapacityTypeOnDemand) {
		t.Error("the zone that took the node is marked too")
	}
}

func TestLaunchShortEverywhereFailsAsInsufficientCapacity(t *testing.T) {
	a, srv, req := launchWorld(t)
	if err := srv.SetSubnetAvailable(subnetOf(t, a, req.Offerings[0].Zone), 19); err != nil {
		t.Fatal(err)
	}
	req.Pods = 1 // 20 addresses
	_, _, calls, err := launchAttempt(t, a, srv, req, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.ErrInsufficientCapacity || !app.NonRetryable() {
		t.Fatalf("launch into a subnet of 19 for a node of 20: %v, want a non-retryable %s", err, workflows.ErrInsufficientCapacity)
	}
	if calls["CreateFleet"] != 0 {
		t.Errorf("CreateFleet called %d times for a launch predicted not to fit", calls["CreateFleet"])
	}
}

// Concurrent launches reserve what they predict: with 45 free, two nodes
// of 20 fit and a third does not until a launch settles; a launch that
// failed gives its reservation back.
func TestSubnetReservationsCountLaunchesInFlight(t *testing.T) {
	a, srv, _ := launchWorld(t)
	p := &a.Launch.subnets
	cls, err := a.Launch.cluster.NodeClass("default")
	if err != nil {
		t.Fatal(err)
	}
	sn := subnetOf(t, a, "us-east-1a")
	if err := srv.SetSubnetAvailable(sn, 45); err != nil {
		t.Fatal(err)
	}
	chosen, err := p.choose(context.Background(), a.Launch.cloud, cls)
	if err != nil || chosen["us-east-1a"] != sn {
		t.Fatalf("choose = %v, %v", chosen, err)
	}
	need := []addressNeed{{Zone: "us-east-1a", Need: 20}}
	var res []map[string]int
	for i, want := range []bool{true, true, false} {
		fits, _, reserved := p.fit(cls.Name, chosen, need)
		if fits[0] != want {
			t.Fatalf("launch %d: fits %v, want %v", i+1, fits[0], want)
		}
		res = append(res, reserved)
	}
	p.settle(cls.Name, res[0], "", 0) // the first launch failed
	if fits, free, _ := p.fit(cls.Name, chosen, need); !fits[0] || free["us-east-1a"] != 25 {
		t.Errorf("after a failed launch gave 20 back: fits %v with %d free, want true with 25", fits[0], free["us-east-1a"])
	}
}

// CreateFleet answering InsufficientFreeAddressesInSubnet leaves the
// subnet out of the next launches' choice (Karpenter v1.13: the subnet,
// not the zone, for 3 minutes).
func TestFleetAddressErrorLeavesTheSubnetOut(t *testing.T) {
	a, _, req := launchWorld(t)
	cls, err := a.Launch.cluster.NodeClass("default")
	if err != nil {
		t.Fatal(err)
	}
	zone := req.Offerings[0].Zone
	lp := launchPlan{Subnet: map[string]string{zone: subnetOf(t, a, zone)}}
	ice := &aws.InsufficientCapacityError{Errors: []aws.FleetError{{Offering: aws.OfferingKey{InstanceType: "m5.large", Zone: zone,
		CapacityType: apiv1.CapacityTypeOnDemand}, Code: CodeInsufficientFreeAddresses}}}
	a.Launch.settleAddresses(cls, req, lp, aws.Instance{}, ice)
	chosen, err := a.Launch.subnets.choose(context.Background(), a.Launch.cloud, cls)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := chosen[zone]; ok || len(chosen) != 2 {
		t.Errorf("choice %v: want %s left out (its only subnet refused) and the 2 other zones", chosen, zone)
	}
}

// The prefixes count in what a node takes of its subnet: an m5.large with
// no pod takes 10 addresses, with 2 prefixes 42, so a zone with 41 free is
// left out and the node goes to the other zone.
func TestLaunchCountsThePrefixesInTheSubnetNeed(t *testing.T) {
	n := int32(2)
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil,
		func(d *Deps) { d.ICE = aws.NewICECache(time.Hour, time.Now) },
		func(cls *apiv1.EC2NodeClass, _ *apiv1.NodeClaim) { cls.Spec.IPPrefixCount = &n })
	zoneA, zoneB := "us-east-1a", "us-east-1b"
	if err := srv.SetSubnetAvailable(subnetOf(t, a, zoneA), 41); err != nil {
		t.Fatal(err)
	}
	req.Pods = 0
	req.Offerings = []saga.Offering{
		{InstanceType: "m5.large", Zone: zoneA, CapacityType: apiv1.CapacityTypeOnDemand},
		{InstanceType: "m5.large", Zone: zoneB, CapacityType: apiv1.CapacityTypeOnDemand},
	}
	inst, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Zone != zoneB {
		t.Errorf("launched in %s, want %s: %s's subnet holds 41 of the 42 addresses", inst.Zone, zoneB, zoneA)
	}
	if !a.Launch.ice.Unavailable("m5.large", zoneA, apiv1.CapacityTypeOnDemand) {
		t.Error("m5.large in the short zone is not left out of plans")
	}
	if got := a.Launch.addressNeedOf(&apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{IPPrefixCount: &n}}, "m5.large", 0); got != 42 {
		t.Errorf("need %d, want 42", got)
	}
	if !strings.HasPrefix(inst.SubnetID, "subnet-") {
		t.Errorf("subnet %q", inst.SubnetID)
	}
}
