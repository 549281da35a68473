package ec2_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// An open reservation takes an on-demand launch of its type and zone that
// names no reservation (EC2's default preference, open), and not one whose
// preference is none; DescribeInstances shows each instance's preference,
// and the target only of a targeted launch.
func TestOpenReservationTakesUntargetedLaunches(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	open, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "c5.large", Zone: "us-east-1b", TotalInstanceCount: 2,
		InstanceMatchCriteria: "open"})
	if err != nil {
		t.Fatal(err)
	}
	x86 := recommended(t, srv, "x86_64", "standard")
	createLT(t, c, "plain", &types.RequestLaunchTemplateData{ImageId: aws.String(x86)}, nil)
	createLT(t, c, "opted-out", &types.RequestLaunchTemplateData{ImageId: aws.String(x86),
		CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceNone}}, nil)
	createLT(t, c, "targeted", &types.RequestLaunchTemplateData{ImageId: aws.String(x86),
		CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &types.CapacityReservationTarget{CapacityReservationId: aws.String(open.ID)}}}, nil)
	described := func(lt string) types.Instance {
		t.Helper()
		out, err := c.CreateFleet(ctx, fleetFrom(lt, "on-demand", types.FleetLaunchTemplateOverridesRequest{
			InstanceType: "c5.large", SubnetId: aws.String(sub["us-east-1b"]), AvailabilityZone: aws.String("us-east-1b")}))
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("%s: %v %+v", lt, err, out)
		}
		di, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
		if err != nil {
			t.Fatal(err)
		}
		return di.Reservations[0].Instances[0]
	}
	spec := func(in types.Instance) (types.CapacityReservationPreference, string) {
		if in.CapacityReservationSpecification == nil {
			return "", ""
		}
		target := ""
		if tg := in.CapacityReservationSpecification.CapacityReservationTarget; tg != nil {
			target = aws.ToString(tg.CapacityReservationId)
		}
		return in.CapacityReservationSpecification.CapacityReservationPreference, target
	}
	plain := described("plain")
	if pref, target := spec(plain); aws.ToString(plain.CapacityReservationId) != open.ID || pref != types.CapacityReservationPreferenceOpen || target != "" {
		t.Errorf("untargeted launch: reservation %q, preference %q, target %q; want %s, open, none", aws.ToString(plain.CapacityReservationId), pref, target, open.ID)
	}
	out := described("opted-out")
	if pref, _ := spec(out); out.CapacityReservationId != nil || pref != types.CapacityReservationPreferenceNone {
		t.Errorf("preference none: reservation %q, preference %q", aws.ToString(out.CapacityReservationId), pref)
	}
	tg := described("targeted")
	if pref, target := spec(tg); aws.ToString(tg.CapacityReservationId) != open.ID || pref != types.CapacityReservationPreferenceCapacityReservationsOnly || target != open.ID {
		t.Errorf("targeted launch: reservation %q, preference %q, target %q", aws.ToString(tg.CapacityReservationId), pref, target)
	}
}
