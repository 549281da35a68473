package aws_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// CapacityReservations resolves terms through DescribeCapacityReservations
// (id, tags, owner); a reserved Launch targets the reservation through its
// template, reports capacity type reserved with the reservation's id, and,
// once the reservation is full, is insufficient capacity of the reserved
// offering (ReservationCapacityExceeded), not put in the ICE cache.
func TestReservedLaunch(t *testing.T) {
	ice := aws.NewICECache(0, nil)
	srv, c := world(t, simec2.Options{}, aws.Options{ICECache: ice})
	ctx := context.Background()
	cr, err := srv.AddCapacityReservation(simec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		Tags: map[string]string{"team": "ml"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddCapacityReservation(simec2.CapacityReservation{InstanceType: "c5.large", Zone: "us-east-1b", TotalInstanceCount: 2}); err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		name  string
		terms []apiv1.CapacityReservationSelectorTerm
		want  int
	}{
		{"by id", []apiv1.CapacityReservationSelectorTerm{{ID: cr.ID}}, 1},
		{"unknown id", []apiv1.CapacityReservationSelectorTerm{{ID: "cr-0000000000000dead"}}, 0},
		{"by tag", []apiv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "*"}}}, 1},
		{"by tag and owner", []apiv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}, OwnerID: "123456789012"}}, 1},
		{"other owner", []apiv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}, OwnerID: "210987654321"}}, 0},
		{"targeted, twice", []apiv1.CapacityReservationSelectorTerm{{InstanceMatchCriteria: "targeted"}, {ID: cr.ID}}, 2},
	} {
		got, err := c.CapacityReservations(ctx, c2.terms)
		if err != nil || len(got) != c2.want {
			t.Errorf("%s: %d reservations (%v), want %d", c2.name, len(got), err, c2.want)
		}
	}
	got, _ := c.CapacityReservations(ctx, []apiv1.CapacityReservationSelectorTerm{{ID: cr.ID}})
	if r := got[0]; r.InstanceType != "m5.large" || r.AvailabilityZone != "us-east-1a" || r.InstanceMatchCriteria != "targeted" ||
		r.ReservationType != "default" || r.State != "active" || r.OwnerID != "123456789012" || *r.AvailableInstanceCount != 1 {
		t.Errorf("status %+v", r)
	}

	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	lt, err := c.EnsureLaunchTemplate(ctx, "joinery-reserved", aws.LaunchTemplateData{ImageID: img, CapacityReservationID: cr.ID})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := srv.LaunchTemplate(lt.Name); d.Data.CapacityReservationPreference != "capacity-reservations-only" || d.Data.CapacityReservationID != cr.ID {
		t.Fatalf("template %+v", d.Data)
	}
	var sn1a aws.Subnet
	for _, s := range subnets(t, c) {
		if s.Zone == "us-east-1a" {
			sn1a = s
		}
	}
	req := aws.LaunchRequest{NodeClaim: "reserved-abc12", NodePool: "reserved", CapacityType: apiv1.CapacityTypeReserved,
		Configs: []aws.LaunchConfig{{LaunchTemplateName: lt.Name, CapacityReservationID: cr.ID,
			Overrides: []aws.LaunchOverride{{InstanceType: "m5.large", SubnetID: sn1a.ID, Zone: "us-east-1a"}}}}}
	in, err := c.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if in.CapacityType != "reserved" || in.CapacityReservationID != cr.ID || in.Type != "m5.large" || in.Zone != "us-east-1a" {
		t.Errorf("launched %+v", in)
	}
	if s, _ := srv.Instance(in.ID); s.CapacityReservationID != cr.ID || s.CapacityType != "on-demand" {
		t.Errorf("EC2 instance %+v", s)
	}
	if g, err := c.Get(ctx, in.ID); err != nil || g.CapacityType != "reserved" || g.CapacityReservationID != cr.ID {
		t.Errorf("Get = %+v, %v", g, err)
	}
	_, err = c.Launch(ctx, req)
	var iceErr *aws.InsufficientCapacityError
	if !errors.As(err, &iceErr) || len(iceErr.Offerings) != 1 || iceErr.Offerings[0] != (aws.OfferingKey{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "reserved"}) ||
		iceErr.Errors[0].Code != "ReservationCapacityExceeded" {
		t.Fatalf("second launch into a full reservation: %v", err)
	}
	// The reservation is out, not the offering (Karpenter marks the
	// reservation id): the ICE cache holds neither.
	if ice.Unavailable("m5.large", "us-east-1a", "reserved") || ice.Unavailable("m5.large", "us-east-1a", "on-demand") {
		t.Error("ICE cache: a full reservation marked its offering unavailable")
	}
	bad := req
	bad.Configs = []aws.LaunchConfig{{LaunchTemplateName: "joinery-default", Overrides: req.Configs[0].Overrides}}
	if _, err := c.Launch(ctx, bad); err == nil {
		t.Error("a reserved launch from a template targeting no reservation was sent")
	}
}

// A capacity block is launched as Karpenter launches one: its template
// says MarketType capacity-block, CreateFleet DefaultTargetCapacityType
// capacity-block (no allocation options); an interruptible reservation's
// template says interruptible-capacity-reservation and CreateFleet
// reserved-capacity with ReservedCapacityOptions. The local EC2 refuses
// any other shape; the instances read back as reserved with their
// reservation's kind (from their lifecycle).
func TestCapacityBlockAndInterruptibleLaunch(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	ctx := context.Background()
	now := time.Now()
	block, err := srv.AddCapacityReservation(simec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: "capacity-block", InstanceMatchCriteria: "targeted", StartDate: now.Add(-time.Minute), EndDate: now.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	lent, err := srv.AddCapacityReservation(simec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1, Interruptible: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.CapacityReservations(ctx, []apiv1.CapacityReservationSelectorTerm{{ID: block.ID}, {ID: lent.ID}})
	byID := map[string]apiv1.CapacityReservationStatus{}
	for _, r := range got {
		byID[r.ID] = r
	}
	if b, l := byID[block.ID], byID[lent.ID]; len(got) != 2 || b.ReservationType != "capacity-block" || b.EndTime == nil || l.ReservationType != "default" || !l.Interruptible {
		t.Fatalf("statuses %+v", got)
	}
	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	var sn1a aws.Subnet
	for _, s := range subnets(t, c) {
		if s.Zone == "us-east-1a" {
			sn1a = s
		}
	}
	for _, tc := range []struct {
		id, market, typ string
		interruptible   bool
	}{
		{block.ID, "capacity-block", "capacity-block", false},
		{lent.ID, "interruptible-capacity-reservation", "default", true},
	} {
		lt, err := c.EnsureLaunchTemplate(ctx, "joinery-"+tc.market, aws.LaunchTemplateData{ImageID: img, CapacityReservationID: tc.id, MarketType: tc.market})
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := srv.LaunchTemplate(lt.Name); d.Data.MarketType != tc.market || d.Data.CapacityReservationID != tc.id {
			t.Fatalf("template %+v", d.Data)
		}
		req := aws.LaunchRequest{NodeClaim: "r-" + tc.market, NodePool: "reserved", CapacityType: apiv1.CapacityTypeReserved,
			ReservationType: tc.typ, Interruptible: tc.interruptible,
			Configs: []aws.LaunchConfig{{LaunchTemplateName: lt.Name, CapacityReservationID: tc.id,
				Overrides: []aws.LaunchOverride{{InstanceType: "m5.large", SubnetID: sn1a.ID, Zone: "us-east-1a"}}}}}
		plain := req
		plain.ReservationType, plain.Interruptible = "", false // sent as a default reservation: EC2 refuses
		if _, err := c.Launch(ctx, plain); err == nil {
			t.Errorf("%s: launched as a default reservation", tc.market)
		}
		in, err := c.Launch(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.market, err)
		}
		s, _ := srv.Instance(in.ID)
		g, err := c.Get(ctx, in.ID)
		if err != nil || s.Lifecycle != tc.market || g.CapacityType != "reserved" || g.CapacityReservationID != tc.id ||
			g.ReservationType != tc.typ || g.ReservationInterruptible != tc.interruptible || in.ReservationType != tc.typ {
			t.Errorf("%s: EC2 %+v, Get %+v (%v), Launch %+v", tc.market, s, g, err, in)
		}
	}
	bad := aws.LaunchRequest{NodeClaim: "x", CapacityType: apiv1.CapacityTypeReserved, ReservationType: "capacity-block",
		Configs: []aws.LaunchConfig{{LaunchTemplateName: "t", CapacityReservationID: block.ID, Overrides: []aws.LaunchOverride{
			{InstanceType: "m5.large", SubnetID: sn1a.ID, Zone: "us-east-1a"}, {InstanceType: "m5.xlarge", SubnetID: sn1a.ID, Zone: "us-east-1a"}}}}}
	if _, err := c.Launch(ctx, bad); err == nil {
		t.Error("a capacity-block launch of two offerings was sent")
	}
}
