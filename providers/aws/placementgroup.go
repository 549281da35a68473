package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// CodePlacementGroupUnknown is EC2's answer for a placement group it does
// not have (by name or id).
const CodePlacementGroupUnknown = "InvalidPlacementGroup.Unknown"

// PlacementGroup resolves a placementGroupSelector as Karpenter's provider
// does: DescribePlacementGroups by id or by name, state available, the
// first group answered. Nil (no error) when EC2 has no such group.
func (c *Client) PlacementGroup(ctx context.Context, sel *apiv1.PlacementGroupSelector) (*apiv1.PlacementGroupStatus, error) {
	in := &ec2.DescribePlacementGroupsInput{Filters: []types.Filter{{Name: aws.String("state"), Values: []string{string(types.PlacementGroupStateAvailable)}}}}
	switch {
	case sel.ID != nil:
		in.GroupIds = []string{*sel.ID}
	case sel.Name != nil:
		in.GroupNames = []string{*sel.Name}
	default:
		return nil, fmt.Errorf("placement group selector names neither a name nor an id")
	}
	out, err := c.ec2.DescribePlacementGroups(ctx, in)
	if isCode(err, CodePlacementGroupUnknown) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DescribePlacementGroups: %w", err)
	}
	if len(out.PlacementGroups) == 0 {
		return nil, nil
	}
	g := out.PlacementGroups[0]
	return &apiv1.PlacementGroupStatus{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), Strategy: string(g.Strategy),
		PartitionCount: aws.ToInt32(g.PartitionCount), SpreadLevel: string(g.SpreadLevel)}, nil
}

// PlacementGroupZones are the zones (sorted) of the group's instances that
// are not terminated: where a cluster group is held.
func (c *Client) PlacementGroupZones(ctx context.Context, name string) ([]string, error) {
	in := &ec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: aws.String("placement-group-name"), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{StatePending, StateRunning, "stopping", "stopped", StateShuttingDown}},
	}}
	var zones []string
	p := ec2.NewDescribeInstancesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstances (placement group %s): %w", name, err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				if i.Placement == nil {
					continue
				}
				if z := aws.ToString(i.Placement.AvailabilityZone); !slices.Contains(zones, z) {
					zones = append(zones, z)
				}
			}
		}
	}
	slices.Sort(zones)
	return zones, nil
}

// spreadLimitText is in EC2's InsufficientInstanceCapacity message when a
// spread group is full in the zone (Karpenter matches the same words).
const spreadLimitText = "limit of instances in this spread placement group"

// scopeToGroup marks a launch into a placement group's shortages within
// the group, as Karpenter does; a full spread group (seven per zone, any
// type) makes every type the request offered in that zone unavailable in
// the group.
func scopeToGroup(req LaunchRequest, errs []FleetError, keys []OfferingKey) []OfferingKey {
	if req.PlacementGroupID == "" {
		return keys
	}
	out := make([]OfferingKey, 0, len(keys))
	seen := map[OfferingKey]bool{}
	add := func(k OfferingKey) {
		k.PlacementGroup = req.PlacementGroupID
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		add(k)
	}
	for _, fe := range errs {
		if !strings.Contains(fe.Message, spreadLimitText) {
			continue
		}
		for _, lc := range req.configs() {
			for _, o := range lc.Overrides {
				if o.Zone == fe.Offering.Zone {
					add(OfferingKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: fe.Offering.CapacityType})
				}
			}
		}
	}
	return out
}
