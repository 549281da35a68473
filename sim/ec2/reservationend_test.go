package ec2_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// A default reservation that ends (expired, or cancelled): its instance
// keeps running, as On-Demand capacity, and DescribeInstances no longer
// names the reservation, which is expired.
func TestEndedReservationsInstancesRunOnDemand(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	cr, err := srv.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	createLT(t, c, "reserved", &types.RequestLaunchTemplateData{ImageId: aws.String(recommended(t, srv, "x86_64", "standard")),
		CapacityReservationSpecification: &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &types.CapacityReservationTarget{CapacityReservationId: aws.String(cr.ID)}}}, nil)
	out, err := c.CreateFleet(ctx, fleetFrom("reserved", "on-demand", types.FleetLaunchTemplateOverridesRequest{
		InstanceType: "m5.large", SubnetId: aws.String(sub["us-east-1a"])}))
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("launch: %v %+v", err, out)
	}
	id := out.Instances[0].InstanceIds[0]
	reservationOf := func() (string, types.InstanceStateName) {
		di, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		in := di.Reservations[0].Instances[0]
		return aws.ToString(in.CapacityReservationId), in.State.Name
	}
	if got, _ := reservationOf(); got != cr.ID {
		t.Fatalf("before the end: reservation %q, want %s", got, cr.ID)
	}
	if err := srv.EndCapacityReservation(cr.ID); err != nil {
		t.Fatal(err)
	}
	if got, st := reservationOf(); got != "" || st != types.InstanceStateNameRunning && st != types.InstanceStateNamePending {
		t.Errorf("after the end: reservation %q, state %s; want none, still running", got, st)
	}
	crs, err := c.DescribeCapacityReservations(ctx, &sdkec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cr.ID}})
	if err != nil || crs.CapacityReservations[0].State != types.CapacityReservationStateExpired {
		t.Errorf("reservation after its end: %v %+v", err, crs)
	}
}
