package ec2_test

import (
	"context"
	"github.com/joinery/joinery/internal/testwait"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// A reservation of 2 m5.large in us-east-1a: DescribeCapacityReservations
// finds it by id, tag and filters with its available count; CreateFleet
// from a template targeting it launches into it twice, then refuses with
// ReservationCapacityExceeded (per override, on-demand lifecycle); a
// terminated instance gives its slot back.
func TestCapacityReservationIsHonoured(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	cr, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 2,
		Tags: map[string]string{"team": "ml"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.nope", Zone: "us-east-1a", TotalInstanceCount: 1}); err == nil {
		t.Error("a reservation of an unknown type was made")
	}
	other, _ := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "c5.large", Zone: "us-east-1b", TotalInstanceCount: 1, InstanceMatchCriteria: "open"})

	describe := func(in *sdkec2.DescribeCapacityReservationsInput) []types.CapacityReservation {
		t.Helper()
		out, err := c.DescribeCapacityReservations(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.CapacityReservations
	}
	got := describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})
	if len(got) != 1 || aws.ToString(got[0].InstanceType) != "m5.large" || aws.ToString(got[0].AvailabilityZone) != "us-east-1a" ||
		aws.ToInt32(got[0].AvailableInstanceCount) != 2 || aws.ToInt32(got[0].TotalInstanceCount) != 2 || got[0].State != types.CapacityReservationStateActive ||
		got[0].InstanceMatchCriteria != types.InstanceMatchCriteriaTargeted || aws.ToString(got[0].OwnerId) != "123456789012" ||
		got[0].ReservationType != types.CapacityReservationTypeDefault || len(got[0].Tags) != 1 {
		t.Fatalf("by id: %+v", got)
	}
	byTag := describe(&sdkec2.DescribeCapacityReservationsInput{Filters: []types.Filter{
		{Name: aws.String("state"), Values: []string{"active"}}, {Name: aws.String("tag:team"), Values: []string{"ml"}}}, MaxResults: aws.Int32(1000)})
	open := describe(&sdkec2.DescribeCapacityReservationsInput{Filters: []types.Filter{
		{Name: aws.String("instance-match-criteria"), Values: []string{"open"}}, {Name: aws.String("owner-id"), Values: []string{"123456789012"}}}})
	if len(byTag) != 1 || aws.ToString(byTag[0].CapacityReservationId) != cr.ID || len(open) != 1 || aws.ToString(open[0].CapacityReservationId) != other.ID {
		t.Errorf("by tag %d, open %d", len(byTag), len(open))
	}
	if _, err := c.DescribeCapacityReservations(ctx, &sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-0000000000000dead"}}); apiCode(err) != "InvalidCapacityReservationId.NotFound" {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := c.DescribeCapacityReservations(ctx, &sdkec2.DescribeCapacityReservationsInput{Filters: []types.Filter{{Name: aws.String("colour"), Values: []string{"x"}}}}); apiCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v", err)
	}

	x86 := recommended(t, srv, "x86_64", "standard")
	createLT(t, c, "reserved", &types.RequestLaunchTemplateData{ImageId: aws.String(x86),
		CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &types.CapacityReservationTarget{CapacityReservationId: aws.String(cr.ID)}}}, nil)
	_, err = c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("bad-pref"), LaunchTemplateData: &types.RequestLaunchTemplateData{
		ImageId: aws.String(x86), CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{CapacityReservationPreference: "sometimes"}}})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("bad preference: %v", err)
	}
	launch := func() *sdkec2.CreateFleetOutput {
		t.Helper()
		out, err := c.CreateFleet(ctx, fleetFrom("reserved", "on-demand", types.FleetLaunchTemplateOverridesRequest{
			InstanceType: "m5.large", SubnetId: aws.String(sub["us-east-1a"]), AvailabilityZone: aws.String("us-east-1a")}))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var ids []string
	for i := 0; i < 2; i++ {
		out := launch()
		if len(out.Instances) != 1 || len(out.Errors) != 0 || out.Instances[0].Lifecycle != "on-demand" {
			t.Fatalf("launch %d: %+v %+v", i, out.Instances, out.Errors)
		}
		ids = append(ids, out.Instances[0].InstanceIds[0])
	}
	full := launch()
	if len(full.Instances) != 0 || len(full.Errors) != 1 || aws.ToString(full.Errors[0].ErrorCode) != "ReservationCapacityExceeded" ||
		full.Errors[0].Lifecycle != "on-demand" {
		t.Fatalf("third launch: %+v %+v", full.Instances, full.Errors)
	}
	if n := aws.ToInt32(describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})[0].AvailableInstanceCount); n != 0 {
		t.Errorf("available %d after 2 launches, want 0", n)
	}
	di, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: ids[:1]})
	if err != nil || aws.ToString(di.Reservations[0].Instances[0].CapacityReservationId) != cr.ID {
		t.Fatalf("DescribeInstances: %v %+v", err, di)
	}
	// Wrong type for the target, and spot from it: refused per override.
	wrong, err := c.CreateFleet(ctx, fleetFrom("reserved", "on-demand", types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.xlarge", SubnetId: aws.String(sub["us-east-1a"])}))
	if err != nil || len(wrong.Errors) != 1 || aws.ToString(wrong.Errors[0].ErrorCode) != "InvalidParameterValue" {
		t.Errorf("wrong type: %v %+v", err, wrong)
	}
	spot, err := c.CreateFleet(ctx, fleetFrom("reserved", "spot", types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(sub["us-east-1a"])}))
	if err != nil || len(spot.Errors) != 1 || aws.ToString(spot.Errors[0].ErrorCode) != "InvalidParameterCombination" {
		t.Errorf("spot: %v %+v", err, spot)
	}

	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[:1]}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the terminated instance's slot back", 10*time.Second, func() bool {
		return aws.ToInt32(describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})[0].AvailableInstanceCount) == 1
	})
	if out := launch(); len(out.Instances) != 1 {
		t.Fatalf("launch after a termination: %+v", out.Errors)
	}

	// Another team takes the last slot: a launch is refused at once, while
	// the described count still says there is room until the lag passes.
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[1:2]}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the second slot back", 10*time.Second, func() bool {
		return aws.ToInt32(describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})[0].AvailableInstanceCount) == 1
	})
	if err := srv.SetReservationHeld(cr.ID, 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt32(describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})[0].AvailableInstanceCount); n != 1 {
		t.Errorf("described available %d right after another team took the slot, want the stale 1", n)
	}
	if out := launch(); len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "ReservationCapacityExceeded" {
		t.Errorf("launch into a slot another team holds: %+v %+v", out.Instances, out.Errors)
	}
	if err := srv.SetReservationHeld(cr.ID, 1, 0); err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt32(describe(&sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})[0].AvailableInstanceCount); n != 0 {
		t.Errorf("described available %d once the hold shows, want 0", n)
	}

	// Kept across a resumed state directory, with the instances in it.
	path := t.TempDir() + "/ec2.json"
	if err := srv.SaveState(path); err != nil {
		t.Fatal(err)
	}
	again := ec2.New(ec2.Options{BootDelay: -1})
	if err := again.LoadState(path); err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	rs := again.CapacityReservations()
	if len(rs) != 2 || rs[0].ID != cr.ID || rs[0].AvailableInstanceCount != 0 || rs[0].Tags["team"] != "ml" {
		t.Errorf("after LoadState: %+v", rs)
	}
	if r, err := again.EnsureCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 2,
		Tags: map[string]string{"team": "ml"}}); err != nil || r.ID != cr.ID || len(again.CapacityReservations()) != 2 {
		t.Errorf("EnsureCapacityReservation made another: %+v %v", r, err)
	}
}
