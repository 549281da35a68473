package cloud

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// LaunchRequest asks for one instance of the first offering that has
// capacity among InstanceTypes × Subnets.
type LaunchRequest struct {
	NodeClaim string // NodeClaim name: karpenter.sh/nodeclaim and Name tags
	NodePool  string // karpenter.sh/nodepool tag
	// CapacityType is "spot" (allocation strategy price-capacity-optimized)
	// or "on-demand" (lowest-price).
	CapacityType string
	// InstanceTypes in the caller's price order, cheapest first; each one
	// becomes an override per subnet, with Priority its position.
	InstanceTypes []string
	// Subnets to launch into, normally one per allowed zone.
	Subnets []Subnet
	// LaunchTemplateName names the launch template (EnsureLaunchTemplate);
	// it must exist, on AWS as on the local endpoint.
	LaunchTemplateName string
	// ImageIDs, per instance type, is the override's ImageId (an arm64 type
	// needs an arm64 image); a type not in it launches the template's image.
	ImageIDs map[string]string
	// LaunchTemplateVersion defaults to "$Latest".
	LaunchTemplateVersion string
	// Tags are extra instance tags (e.g. the NodeClass's spec.tags); the
	// NodeClaim, NodePool, cluster and Name tags take precedence.
	Tags map[string]string
	// ClientToken makes the request idempotent: resending the same request
	// with the same token returns the first answer instead of launching
	// again. Reuse it only for an identical request (EC2 answers
	// IdempotentParameterMismatch otherwise); empty lets the SDK generate one.
	ClientToken string
}

// Launch launches one instance with CreateFleet Type=instant,
// TotalTargetCapacity=1. When nothing comes back and some offerings failed
// for lack of capacity it returns an *InsufficientCapacityError listing
// them; other failures are wrapped with the API name. Unfulfillable
// offerings are also recorded in Options.ICECache, if set, even when an
// instance was launched from another offering.
//
// The Instance returned is pending; its LaunchTime and PrivateDNSName are
// known once Get sees it.
func (c *Client) Launch(ctx context.Context, req LaunchRequest) (Instance, error) {
	if req.CapacityType != apiv1.CapacityTypeSpot && req.CapacityType != apiv1.CapacityTypeOnDemand {
		return Instance{}, fmt.Errorf("launch: capacity type %q is not spot or on-demand", req.CapacityType)
	}
	if len(req.InstanceTypes) == 0 || len(req.Subnets) == 0 {
		return Instance{}, errors.New("launch: need at least one instance type and one subnet")
	}
	if req.LaunchTemplateName == "" {
		return Instance{}, errors.New("launch: LaunchTemplateName is required")
	}
	version := req.LaunchTemplateVersion
	if version == "" {
		version = "$Latest"
	}
	zoneOf := map[string]string{}
	var overrides []types.FleetLaunchTemplateOverridesRequest
	for i, it := range req.InstanceTypes {
		for _, sn := range req.Subnets {
			zoneOf[sn.ID] = sn.Zone
			o := types.FleetLaunchTemplateOverridesRequest{
				InstanceType: types.InstanceType(it),
				SubnetId:     aws.String(sn.ID),
				Priority:     aws.Float64(float64(i)),
			}
			if img := req.ImageIDs[it]; img != "" {
				o.ImageId = aws.String(img)
			}
			overrides = append(overrides, o)
		}
	}
	tags := maps.Clone(req.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[apiv1.TagNodeClaim] = req.NodeClaim
	tags[apiv1.TagNodePool] = req.NodePool
	tags[apiv1.TagCluster] = c.opts.ClusterName
	tags[apiv1.TagName] = req.NodeClaim
	var ec2Tags []types.Tag
	for _, k := range sortedKeys(tags) {
		ec2Tags = append(ec2Tags, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	in := &ec2.CreateFleetInput{
		Type: types.FleetTypeInstant,
		LaunchTemplateConfigs: []types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(req.LaunchTemplateName),
				Version:            aws.String(version),
			},
			Overrides: overrides,
		}},
		TargetCapacitySpecification: &types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity:       aws.Int32(1),
			DefaultTargetCapacityType: types.DefaultTargetCapacityType(req.CapacityType),
		},
		TagSpecifications: []types.TagSpecification{
			{ResourceType: types.ResourceTypeInstance, Tags: ec2Tags},
			{ResourceType: types.ResourceTypeVolume, Tags: ec2Tags},
		},
	}
	if req.CapacityType == apiv1.CapacityTypeSpot {
		in.SpotOptions = &types.SpotOptionsRequest{AllocationStrategy: types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		in.OnDemandOptions = &types.OnDemandOptionsRequest{AllocationStrategy: types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	if req.ClientToken != "" {
		in.ClientToken = aws.String(req.ClientToken)
	}
	out, err := c.ec2.CreateFleet(ctx, in)
	if err != nil {
		return Instance{}, fmt.Errorf("CreateFleet: %w", err)
	}

	var fleetErrs []FleetError
	var unfulfillable []OfferingKey
	seen := map[OfferingKey]bool{}
	for _, e := range out.Errors {
		fe := FleetError{Code: aws.ToString(e.ErrorCode), Message: aws.ToString(e.ErrorMessage)}
		fe.Offering.CapacityType = req.CapacityType
		if e.Lifecycle != "" {
			fe.Offering.CapacityType = string(e.Lifecycle)
		}
		if lo := e.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
			fe.Offering.InstanceType = string(lo.Overrides.InstanceType)
			fe.Offering.Zone = aws.ToString(lo.Overrides.AvailabilityZone)
			if fe.Offering.Zone == "" {
				fe.Offering.Zone = zoneOf[aws.ToString(lo.Overrides.SubnetId)]
			}
		}
		fleetErrs = append(fleetErrs, fe)
		if IsUnfulfillableCode(fe.Code) && !seen[fe.Offering] {
			seen[fe.Offering] = true
			unfulfillable = append(unfulfillable, fe.Offering)
		}
	}
	c.opts.ICECache.MarkAll(unfulfillable)

	for _, fi := range out.Instances {
		if len(fi.InstanceIds) == 0 {
			continue
		}
		inst := Instance{
			ID: fi.InstanceIds[0], Type: string(fi.InstanceType), CapacityType: req.CapacityType,
			State: StatePending, Tags: tags,
		}
		if fi.Lifecycle != "" {
			inst.CapacityType = string(fi.Lifecycle)
		}
		if lo := fi.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
			inst.Zone = aws.ToString(lo.Overrides.AvailabilityZone)
			if inst.Zone == "" {
				inst.Zone = zoneOf[aws.ToString(lo.Overrides.SubnetId)]
			}
			if inst.Type == "" {
				inst.Type = string(lo.Overrides.InstanceType)
			}
		}
		return inst, nil
	}
	if len(unfulfillable) > 0 {
		return Instance{}, &InsufficientCapacityError{Offerings: unfulfillable, Errors: fleetErrs}
	}
	errs := make([]error, len(fleetErrs))
	for i, fe := range fleetErrs {
		errs[i] = fe
	}
	return Instance{}, fmt.Errorf("CreateFleet: no instance launched: %w", errors.Join(errs...))
}
