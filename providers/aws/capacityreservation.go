package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// CodeReservationCapacityExceeded is CreateFleet's per-override error when
// the targeted capacity reservation has no instance left (Karpenter treats
// it as insufficient capacity of the reservation).
const CodeReservationCapacityExceeded = "ReservationCapacityExceeded"

// CapacityReservations resolves capacityReservationSelectorTerms (ORed) to
// the active reservations they select, as Karpenter's provider does: a
// term with an id asks for that id (a reservation that does not exist is
// not an error: none is selected); a term with tags and/or
// instanceMatchCriteria filters by them ("*" selects any value of a tag
// key), and by owner-id when ownerID is set. Every query filters
// state=active. The answer is deduplicated and sorted by id, with each
// reservation's AvailableInstanceCount at the time of the call.
func (c *Client) CapacityReservations(ctx context.Context, terms []apiv1.CapacityReservationSelectorTerm) ([]apiv1.CapacityReservationStatus, error) {
	byID := map[string]apiv1.CapacityReservationStatus{}
	for i, t := range terms {
		for _, in := range capacityReservationQueries(t) {
			p := ec2.NewDescribeCapacityReservationsPaginator(c.ec2, in)
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if isCode(err, "InvalidCapacityReservationId.NotFound") {
					break // asked by id: one page only
				}
				if err != nil {
					return nil, fmt.Errorf("DescribeCapacityReservations (capacity reservation selector term %d): %w", i, err)
				}
				for _, r := range page.CapacityReservations {
					st := reservationStatus(r)
					byID[st.ID] = st
				}
			}
		}
	}
	out := make([]apiv1.CapacityReservationStatus, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, byID[id])
	}
	return out, nil
}

// capacityReservationQueries are the DescribeCapacityReservations inputs of
// one term (Karpenter's QueriesFromSelectorTerms).
func capacityReservationQueries(t apiv1.CapacityReservationSelectorTerm) []*ec2.DescribeCapacityReservationsInput {
	active := types.Filter{Name: aws.String("state"), Values: []string{string(types.CapacityReservationStateActive)}}
	var out []*ec2.DescribeCapacityReservationsInput
	if t.ID != "" {
		out = append(out, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{t.ID}, Filters: []types.Filter{active}})
	}
	if len(t.Tags) == 0 && t.InstanceMatchCriteria == "" {
		return out
	}
	fs := []types.Filter{active}
	if t.OwnerID != "" {
		fs = append(fs, types.Filter{Name: aws.String("owner-id"), Values: []string{t.OwnerID}})
	}
	for _, k := range slices.Sorted(maps.Keys(t.Tags)) {
		if v := t.Tags[k]; v == "*" {
			fs = append(fs, types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			fs = append(fs, types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	if t.InstanceMatchCriteria != "" {
		fs = append(fs, types.Filter{Name: aws.String("instance-match-criteria"), Values: []string{t.InstanceMatchCriteria}})
	}
	return append(out, &ec2.DescribeCapacityReservationsInput{Filters: fs, MaxResults: aws.Int32(1000)})
}

func reservationStatus(r types.CapacityReservation) apiv1.CapacityReservationStatus {
	st := apiv1.CapacityReservationStatus{
		ID: aws.ToString(r.CapacityReservationId), AvailabilityZone: aws.ToString(r.AvailabilityZone),
		InstanceType: aws.ToString(r.InstanceType), OwnerID: aws.ToString(r.OwnerId),
		InstanceMatchCriteria: string(r.InstanceMatchCriteria), ReservationType: string(r.ReservationType),
		Interruptible: aws.ToBool(r.Interruptible), State: string(r.State),
	}
	if st.ReservationType == "" {
		st.ReservationType = apiv1.CapacityReservationTypeDefault
	}
	if r.EndDate != nil {
		t := metav1.NewTime(*r.EndDate)
		st.EndTime = &t
	}
	if r.AvailableInstanceCount != nil {
		n := *r.AvailableInstanceCount
		st.AvailableInstanceCount = &n
	}
	return st
}
