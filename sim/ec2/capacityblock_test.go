package ec2_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/sim/ec2"
)

// reservedLT creates a template targeting the reservation, with the
// market type ("" for none).
func reservedLT(t *testing.T, c *sdkec2.Client, name, image, id string, market types.MarketType) {
	t.Helper()
	d := &types.RequestLaunchTemplateData{ImageId: aws.String(image),
		CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &types.CapacityReservationTarget{CapacityReservationId: aws.String(id)}}}
	if market != "" {
		d.InstanceMarketOptions = &types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: market}
	}
	createLT(t, c, name, d, nil)
}

// reservedFleet is one m5.large in us-east-1a from the template, as the
// target type asks (capacity-block: no options; reserved-capacity: the
// interruptible reservation option).
func reservedFleet(t *testing.T, c *sdkec2.Client, lt, subnet string, target types.DefaultTargetCapacityType) *sdkec2.CreateFleetOutput {
	t.Helper()
	in := fleetFrom(lt, "on-demand", types.FleetLaunchTemplateOverridesRequest{
		InstanceType: "m5.large", SubnetId: aws.String(subnet), AvailabilityZone: aws.String("us-east-1a")})
	in.TargetCapacitySpecification.DefaultTargetCapacityType = target
	switch target {
	case types.DefaultTargetCapacityTypeCapacityBlock:
		in.OnDemandOptions = nil
	case types.DefaultTargetCapacityTypeReservedCapacity:
		in.OnDemandOptions = nil
		in.ReservedCapacityOptions = &types.ReservedCapacityOptionsRequest{
			ReservationTypes: []types.FleetReservationType{types.FleetReservationTypeInterruptibleCapacityReservation}}
	}
	out, err := c.CreateFleet(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateFleet %s: %v", lt, err)
	}
	return out
}

func fleetErrorCode(out *sdkec2.CreateFleetOutput) string {
	if len(out.Instances) > 0 || len(out.Errors) == 0 {
		return ""
	}
	return aws.ToString(out.Errors[0].ErrorCode)
}

// A capacity block takes launches only as EC2 takes them: a template of
// MarketType capacity-block targeting it, DefaultTargetCapacityType
// capacity-block, after its start; its instances are capacity-block
// instances, and EC2 terminates them 30 minutes before the block's end.
func TestCapacityBlockLaunchRules(t *testing.T) {
	srv, c, sub := strictWorld(t)
	now := time.Now()
	if _, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: "capacity-block"}); err == nil {
		t.Error("a capacity block without an end date was made")
	}
	if _, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: "capacity-block", EndDate: now.Add(time.Hour), Interruptible: true}); err == nil {
		t.Error("an interruptible capacity block was made")
	}
	// Its end is 30 min and 3 s away: EC2 reclaims its instances in 3 s.
	block, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 2,
		ReservationType: "capacity-block", StartDate: now.Add(-time.Minute), EndDate: now.Add(ec2.CapacityBlockReclaim + 3*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	later, _ := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: "capacity-block", StartDate: now.Add(time.Hour), EndDate: now.Add(25 * time.Hour)})
	got, err := c.DescribeCapacityReservations(context.Background(), &sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{block.ID, later.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if r := got.CapacityReservations; len(r) != 2 || r[0].ReservationType != types.CapacityReservationTypeCapacityBlock || r[0].State != "active" ||
		r[1].State != "scheduled" || aws.ToInt32(r[1].AvailableInstanceCount) != 0 || r[0].EndDate == nil {
		t.Fatalf("described %+v", r)
	}
	x86 := recommended(t, srv, "x86_64", "standard")
	reservedLT(t, c, "block", x86, block.ID, types.MarketTypeCapacityBlock)
	reservedLT(t, c, "block-plain", x86, block.ID, "")
	reservedLT(t, c, "block-later", x86, later.ID, types.MarketTypeCapacityBlock)
	for _, tc := range []struct {
		lt     string
		target types.DefaultTargetCapacityType
		code   string
	}{
		{"block-plain", types.DefaultTargetCapacityTypeCapacityBlock, "InvalidParameterCombination"},  // no MarketType
		{"block", types.DefaultTargetCapacityTypeOnDemand, "InvalidParameterCombination"},             // not a capacity-block fleet
		{"block-later", types.DefaultTargetCapacityTypeCapacityBlock, "InsufficientInstanceCapacity"}, // not started
	} {
		if code := fleetErrorCode(reservedFleet(t, c, tc.lt, sub["us-east-1a"], tc.target)); code != tc.code {
			t.Errorf("%s as %s: %q, want %s", tc.lt, tc.target, code, tc.code)
		}
	}
	out := reservedFleet(t, c, "block", sub["us-east-1a"], types.DefaultTargetCapacityTypeCapacityBlock)
	if len(out.Instances) != 1 || out.Instances[0].Lifecycle != "capacity-block" {
		t.Fatalf("launch into the block: %+v / %+v", out.Instances, out.Errors)
	}
	id := out.Instances[0].InstanceIds[0]
	in, _ := srv.Instance(id)
	if in.CapacityReservationID != block.ID || in.Lifecycle != "capacity-block" || in.MarketType != "capacity-block" {
		t.Errorf("instance %+v", in)
	}
	desc, err := c.DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || desc.Reservations[0].Instances[0].InstanceLifecycle != types.InstanceLifecycleTypeCapacityBlock {
		t.Errorf("described: %v %+v", err, desc)
	}
	testwait.Eventually(t, "EC2 reclaims the block's instance 30 min before its end", 20*time.Second, func() bool {
		in, _ := srv.Instance(id)
		return in.State == ec2.StateShuttingDown || in.State == ec2.StateTerminated
	})
	// Its last 30 minutes take no launch.
	if code := fleetErrorCode(reservedFleet(t, c, "block", sub["us-east-1a"], types.DefaultTargetCapacityTypeCapacityBlock)); code != "InsufficientInstanceCapacity" {
		t.Errorf("launch into an ending block: %q", code)
	}
}

// An interruptible reservation takes launches only as reserved-capacity
// with its ReservedCapacityOptions and a template of MarketType
// interruptible-capacity-reservation; its owner may take an instance
// back (the reservation shrinks, the instance goes after the notice).
func TestInterruptibleReservationRules(t *testing.T) {
	srv, c, sub := strictWorld(t)
	lent, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1, Interruptible: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.DescribeCapacityReservations(context.Background(), &sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{lent.ID}})
	if r := got.CapacityReservations; len(r) != 1 || !aws.ToBool(r[0].Interruptible) || r[0].ReservationType != types.CapacityReservationTypeDefault {
		t.Fatalf("described %+v", r)
	}
	x86 := recommended(t, srv, "x86_64", "standard")
	reservedLT(t, c, "lent", x86, lent.ID, types.MarketTypeInterruptibleCapacityReservation)
	reservedLT(t, c, "lent-plain", x86, lent.ID, "")
	if code := fleetErrorCode(reservedFleet(t, c, "lent-plain", sub["us-east-1a"], types.DefaultTargetCapacityTypeOnDemand)); code != "InvalidParameterCombination" {
		t.Errorf("an on-demand launch into an interruptible reservation: %q", code)
	}
	in := fleetFrom("lent", "on-demand")
	in.TargetCapacitySpecification.DefaultTargetCapacityType = types.DefaultTargetCapacityTypeReservedCapacity
	if _, err := c.CreateFleet(context.Background(), in); apiCode(err) != "MissingParameter" {
		t.Errorf("reserved-capacity without ReservedCapacityOptions: %v", err)
	}
	out := reservedFleet(t, c, "lent", sub["us-east-1a"], types.DefaultTargetCapacityTypeReservedCapacity)
	if len(out.Instances) != 1 || out.Instances[0].Lifecycle != "interruptible-capacity-reservation" {
		t.Fatalf("launch: %+v / %+v", out.Instances, out.Errors)
	}
	id := out.Instances[0].InstanceIds[0]
	reclaimed := make(chan ec2.Instance, 1)
	if _, err := srv.ReclaimInterruptible(id, 100*time.Millisecond, func(i ec2.Instance) { reclaimed <- i }); err != nil {
		t.Fatal(err)
	}
	if gone := <-reclaimed; gone.ID != id || gone.State != ec2.StateShuttingDown {
		t.Errorf("reclaimed %+v", gone)
	}
	if r := srv.CapacityReservations()[0]; r.TotalInstanceCount != 0 || r.AvailableInstanceCount != 0 {
		t.Errorf("after the reclaim: %+v", r)
	}
	if _, err := srv.ReclaimInterruptible(id, 0, nil); err == nil {
		t.Error("reclaimed an instance already going")
	}
}
