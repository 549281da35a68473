package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// EC2's answers about placement groups Joinery creates and deletes.
const (
	CodePlacementGroupDuplicate = "InvalidPlacementGroup.Duplicate"
	CodePlacementGroupInUse     = "InvalidPlacementGroup.InUse"
)

// ErrPlacementGroupInUse: EC2 keeps a group while instances are in it.
var ErrPlacementGroupInUse = errors.New("placement group in use")

// OwnedPlacementGroup is a placement group this cluster created.
type OwnedPlacementGroup struct {
	ID, Name string
	Tags     map[string]string
	// Created is its joinery.sh/created-at tag (zero: none).
	Created time.Time
}

// EnsureClusterPlacementGroup creates the cluster placement group name,
// tagged with the cluster, its creation time and tags. A group of that
// name already there (an earlier attempt's) is described and returned:
// the name is the caller's idempotency key.
func (c *Client) EnsureClusterPlacementGroup(ctx context.Context, name string, tags map[string]string) (apiv1.PlacementGroupStatus, error) {
	tags = maps.Clone(tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[apiv1.TagCluster] = c.opts.ClusterName
	tags[apiv1.TagCreatedAt] = c.opts.Clock.Now().UTC().Format(time.RFC3339)
	out, err := c.ec2.CreatePlacementGroup(ctx, &ec2.CreatePlacementGroupInput{GroupName: aws.String(name), Strategy: types.PlacementStrategyCluster,
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypePlacementGroup, Tags: ec2Tags(tags)}}})
	if isCode(err, CodePlacementGroupDuplicate) {
		pg, err := c.PlacementGroup(ctx, &apiv1.PlacementGroupSelector{Name: &name})
		if err == nil && pg == nil {
			err = fmt.Errorf("placement group %s exists but EC2 does not show it yet", name)
		}
		if err != nil {
			return apiv1.PlacementGroupStatus{}, err
		}
		return *pg, nil
	}
	if err != nil {
		return apiv1.PlacementGroupStatus{}, fmt.Errorf("CreatePlacementGroup %s: %w", name, err)
	}
	g := out.PlacementGroup
	return apiv1.PlacementGroupStatus{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), Strategy: string(g.Strategy)}, nil
}

// DeletePlacementGroup deletes the group; one EC2 does not have counts as
// deleted, one still holding instances is ErrPlacementGroupInUse.
func (c *Client) DeletePlacementGroup(ctx context.Context, name string) error {
	_, err := c.ec2.DeletePlacementGroup(ctx, &ec2.DeletePlacementGroupInput{GroupName: aws.String(name)})
	switch {
	case err == nil, isCode(err, CodePlacementGroupUnknown):
		return nil
	case isCode(err, CodePlacementGroupInUse):
		return fmt.Errorf("DeletePlacementGroup %s: %w (%v)", name, ErrPlacementGroupInUse, err)
	}
	return fmt.Errorf("DeletePlacementGroup %s: %w", name, err)
}

// OwnedPlacementGroups lists this cluster's placement groups that carry
// the tag key (tag filters: joinery.sh/cluster, tag-key).
func (c *Client) OwnedPlacementGroups(ctx context.Context, tagKey string) ([]OwnedPlacementGroup, error) {
	out, err := c.ec2.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{Filters: []types.Filter{
		{Name: aws.String("tag:" + apiv1.TagCluster), Values: []string{c.opts.ClusterName}},
		{Name: aws.String("tag-key"), Values: []string{tagKey}},
	}})
	if err != nil {
		return nil, fmt.Errorf("DescribePlacementGroups: %w", err)
	}
	var gs []OwnedPlacementGroup
	for _, g := range out.PlacementGroups {
		o := OwnedPlacementGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), Tags: map[string]string{}}
		for _, t := range g.Tags {
			o.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		o.Created, _ = time.Parse(time.RFC3339, o.Tags[apiv1.TagCreatedAt])
		gs = append(gs, o)
	}
	return gs, nil
}
