package aws

import (
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	apiv1 "github.com/joinery/joinery/api/v1"
)

// An instance is reserved only when launched capacity-reservations-only,
// as Karpenter's capacityTypeFromInstance: an on-demand launch an open
// reservation took stays on-demand.
func TestReservedOnlyWhenTargeted(t *testing.T) {
	in := func(pref types.CapacityReservationPreference) types.Instance {
		return types.Instance{InstanceId: sdkaws.String("i-1"), CapacityReservationId: sdkaws.String("cr-1"),
			CapacityReservationSpecification: &types.CapacityReservationSpecificationResponse{CapacityReservationPreference: pref}}
	}
	for _, tc := range []struct {
		in   types.Instance
		want string
		id   string
	}{
		{in(types.CapacityReservationPreferenceCapacityReservationsOnly), apiv1.CapacityTypeReserved, "cr-1"},
		{in(types.CapacityReservationPreferenceOpen), apiv1.CapacityTypeOnDemand, ""},
		{types.Instance{InstanceId: sdkaws.String("i-2"), CapacityReservationId: sdkaws.String("cr-1")}, apiv1.CapacityTypeOnDemand, ""},
		{types.Instance{InstanceId: sdkaws.String("i-3"), InstanceLifecycle: types.InstanceLifecycleTypeSpot}, apiv1.CapacityTypeSpot, ""},
	} {
		got := fromEC2(tc.in)
		if got.CapacityType != tc.want || got.CapacityReservationID != tc.id {
			t.Errorf("%s: capacity type %s, reservation %q; want %s, %q", got.ID, got.CapacityType, got.CapacityReservationID, tc.want, tc.id)
		}
	}
}
