package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// LaunchRequest asks for one instance of the first offering that has
// capacity among its launch template configs' overrides.
type LaunchRequest struct {
	NodeClaim string // NodeClaim name: karpenter.sh/nodeclaim and Name tags
	NodePool  string // karpenter.sh/nodepool tag
	// CapacityType is "spot" (allocation strategy price-capacity-optimized),
	// "on-demand" (lowest-price), or "reserved": launch templates that each
	// target one capacity reservation (LaunchConfig.CapacityReservationID),
	// all of ReservationType and Interruptible, launched as Karpenter
	// launches each kind: a default reservation as on-demand capacity
	// (lowest-price), a capacity block as DefaultTargetCapacityType
	// capacity-block (no allocation options), an interruptible one as
	// reserved-capacity with ReservedCapacityOptions
	// interruptible-capacity-reservation.
	CapacityType string
	// PlacementGroupID is the group the templates launch into ("" none):
	// the shortages of the answer are marked within it (scopeToGroup).
	PlacementGroupID string
	// ReservationType ("default", "" as default, or "capacity-block") and
	// Interruptible are the reserved launch's reservations' kind.
	ReservationType string `json:",omitempty"`
	Interruptible   bool   `json:",omitempty"`
	// Prioritized launches by the overrides' Price instead of EC2's own
	// prices (capacity-optimized-prioritized for spot, prioritized for
	// on-demand), as Karpenter does when NodeOverlays set the prices.
	Prioritized bool
	// Configs are the launch templates with their overrides, one config per
	// template (one per image and user data), overrides in the caller's
	// price order across configs; Priority is that position.
	Configs []LaunchConfig
	// InstanceTypes × Subnets with LaunchTemplateName is the one-template
	// shorthand of Configs (used when Configs is empty).
	InstanceTypes      []string
	Subnets            []Subnet
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
	// Solo launches in a CreateFleet of its own, never shared with other
	// NodeClaims' launches: a retry of a launch whose answer was lost
	// sends it, so that its client token finds the lost call's instance.
	Solo bool
	// Context is CreateFleet's reserved Context parameter
	// (spec.context), "" to leave it out.
	Context string
}

// LaunchConfig is one launch template and the offerings to try with it.
type LaunchConfig struct {
	LaunchTemplateName string
	Overrides          []LaunchOverride
	// CapacityReservationID is the reservation the template targets
	// (reserved launches; "" otherwise).
	CapacityReservationID string `json:",omitempty"`
}

// LaunchOverride is one offering: an instance type in a subnet (zone),
// with the image to boot when it differs from the template's.
type LaunchOverride struct {
	InstanceType string
	SubnetID     string
	Zone         string
	ImageID      string
	// Price is what Joinery expects to pay (USD/hour): the override's
	// Priority when the request is Prioritized.
	Price float64
}

// configs returns the request's configs, expanding the shorthand.
func (r LaunchRequest) configs() []LaunchConfig {
	if len(r.Configs) > 0 {
		return r.Configs
	}
	c := LaunchConfig{LaunchTemplateName: r.LaunchTemplateName}
	for _, it := range r.InstanceTypes {
		for _, sn := range r.Subnets {
			c.Overrides = append(c.Overrides, LaunchOverride{InstanceType: it, SubnetID: sn.ID, Zone: sn.Zone, ImageID: r.ImageIDs[it]})
		}
	}
	return []LaunchConfig{c}
}

// Launch launches one instance with CreateFleet Type=instant,
// TotalTargetCapacity=1. When nothing comes back and some offerings failed
// for lack of capacity it returns an *InsufficientCapacityError listing
// them; other failures are wrapped with the API name. Unfulfillable
// offerings are also recorded in Options.ICECache, if set, even when an
// instance was launched from another offering; reserved ones are not (the
// reservation is out, not the offering: the caller counts it used up).
//
// The Instance returned is pending; its LaunchTime and PrivateDNSName are
// known once Get sees it.
func (c *Client) Launch(ctx context.Context, req LaunchRequest) (Instance, error) {
	if err := checkLaunch(req); err != nil {
		return Instance{}, err
	}
	if c.fleets != nil && !req.Solo {
		return c.fleets.launch(ctx, req)
	}
	return c.launchOne(ctx, req)
}

// checkLaunch refuses a request no CreateFleet could serve.
func checkLaunch(req LaunchRequest) error {
	if req.CapacityType != apiv1.CapacityTypeSpot && req.CapacityType != apiv1.CapacityTypeOnDemand && req.CapacityType != apiv1.CapacityTypeReserved {
		return fmt.Errorf("launch: capacity type %q is not spot, on-demand or reserved", req.CapacityType)
	}
	if _, _, err := fleetConfigs(req); err != nil {
		return err
	}
	if req.CapacityType != apiv1.CapacityTypeReserved {
		if req.ReservationType != "" || req.Interruptible {
			return fmt.Errorf("launch: a %s launch has no reservation type", req.CapacityType)
		}
		return nil
	}
	for _, lc := range req.configs() {
		if lc.CapacityReservationID == "" {
			return fmt.Errorf("launch: reserved launch template %s targets no capacity reservation", lc.LaunchTemplateName)
		}
	}
	switch req.ReservationType {
	case "", apiv1.CapacityReservationTypeDefault:
	case apiv1.CapacityReservationTypeCapacityBlock:
		if req.Interruptible {
			return errors.New("launch: a capacity block is never interruptible")
		}
		if n := len(req.configs()); n != 1 || len(req.configs()[0].Overrides) != 1 {
			// CreateFleet takes one capacity block per request (Karpenter's
			// capacity block filter keeps the cheapest offering).
			return errors.New("launch: a capacity-block launch takes exactly one offering")
		}
	default:
		return fmt.Errorf("launch: reservation type %q is not default or capacity-block", req.ReservationType)
	}
	return nil
}

// launchOne launches the request's instance in a CreateFleet of its own,
// tagged with its NodeClaim at launch, under its client token.
func (c *Client) launchOne(ctx context.Context, req LaunchRequest) (Instance, error) {
	configs, zoneOf, _ := fleetConfigs(req)
	tags := c.instanceTags(req)
	out, err := c.ec2.CreateFleet(ctx, fleetInput(req, configs, tags, 1))
	if err != nil {
		return Instance{}, fmt.Errorf("CreateFleet: %w", err)
	}
	fleetErrs, unfulfillable := fleetErrors(out.Errors, req.CapacityType, zoneOf)
	unfulfillable = scopeToGroup(req, fleetErrs, unfulfillable)
	c.opts.ICECache.MarkAll(unreserved(unfulfillable))
	c.opts.ICECache.MarkAll(quotaMarks(fleetErrs))
	if insts := launched(out.Instances, req.CapacityType, tags, zoneOf); len(insts) > 0 {
		return withReservation(req, insts[0]), nil
	}
	return Instance{}, noInstance(fleetErrs, unfulfillable)
}

// withReservation names the capacity reservation a reserved instance
// was launched into.
func withReservation(req LaunchRequest, inst Instance) Instance {
	if req.CapacityType == apiv1.CapacityTypeReserved {
		inst.CapacityReservationID = reservationOf(req, inst.Type, inst.Zone)
		inst.ReservationType, inst.ReservationInterruptible = req.ReservationType, req.Interruptible
		if inst.ReservationType == "" {
			inst.ReservationType = apiv1.CapacityReservationTypeDefault
		}
	}
	return inst
}

// noInstance is the error of a CreateFleet answer that launched nothing
// (for this caller). Insufficient capacity means every override failed
// for capacity; a launch that also failed for another reason (a missing
// image, a full subnet's neighbour, a bad profile) is a launch error to
// fix or retry.
func noInstance(fleetErrs []FleetError, unfulfillable []OfferingKey) error {
	if len(unfulfillable) > 0 && allUnfulfillable(fleetErrs) {
		return &InsufficientCapacityError{Offerings: unfulfillable, Errors: fleetErrs}
	}
	if ae, ok := fleetUnauthorized(fleetErrs); ok {
		return ae // a policy to fix, whatever else failed
	}
	return &NoLaunchError{Errors: fleetErrs}
}

// fleetConfigs turns the request's configs into CreateFleet's, Priority
// being each override's position across configs; zoneOf maps subnet to zone.
func fleetConfigs(req LaunchRequest) ([]types.FleetLaunchTemplateConfigRequest, map[string]string, error) {
	version := req.LaunchTemplateVersion
	if version == "" {
		version = "$Latest"
	}
	zoneOf := map[string]string{}
	var configs []types.FleetLaunchTemplateConfigRequest
	priority := 0
	for _, lc := range req.configs() {
		if lc.LaunchTemplateName == "" {
			return nil, nil, errors.New("launch: every launch config needs a LaunchTemplateName")
		}
		var overrides []types.FleetLaunchTemplateOverridesRequest
		for _, o := range lc.Overrides {
			zoneOf[o.SubnetID] = o.Zone
			ov := types.FleetLaunchTemplateOverridesRequest{
				InstanceType: types.InstanceType(o.InstanceType),
				SubnetId:     aws.String(o.SubnetID),
				Priority:     aws.Float64(float64(priority)),
			}
			if req.Prioritized {
				ov.Priority = aws.Float64(o.Price)
			}
			if o.Zone != "" {
				ov.AvailabilityZone = aws.String(o.Zone)
			}
			if o.ImageID != "" {
				ov.ImageId = aws.String(o.ImageID)
			}
			overrides = append(overrides, ov)
			priority++
		}
		configs = append(configs, types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(lc.LaunchTemplateName),
				Version:            aws.String(version),
			},
			Overrides: overrides,
		})
	}
	if priority == 0 {
		return nil, nil, errors.New("launch: need at least one offering (instance type and subnet)")
	}
	return configs, zoneOf, nil
}

// instanceTags are the request's tags under Joinery's own, which win.
func (c *Client) instanceTags(req LaunchRequest) map[string]string {
	tags := maps.Clone(req.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[apiv1.TagNodeClaim] = req.NodeClaim
	tags[apiv1.TagNodePool] = req.NodePool
	tags[apiv1.TagCluster] = c.opts.ClusterName
	tags[apiv1.TagName] = req.NodeClaim
	return tags
}

func fleetInput(req LaunchRequest, configs []types.FleetLaunchTemplateConfigRequest, tags map[string]string, capacity int) *ec2.CreateFleetInput {
	var ec2Tags []types.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		ec2Tags = append(ec2Tags, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	in := &ec2.CreateFleetInput{
		Type:                  types.FleetTypeInstant,
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity:       aws.Int32(int32(capacity)),
			DefaultTargetCapacityType: defaultTargetCapacityType(req),
		},
		TagSpecifications: []types.TagSpecification{
			{ResourceType: types.ResourceTypeInstance, Tags: ec2Tags},
			{ResourceType: types.ResourceTypeVolume, Tags: ec2Tags},
		},
	}
	switch {
	case req.CapacityType == apiv1.CapacityTypeReserved && req.ReservationType == apiv1.CapacityReservationTypeCapacityBlock:
		// Capacity blocks: no allocation options, as Karpenter sends them.
	case req.CapacityType == apiv1.CapacityTypeReserved && req.Interruptible:
		in.ReservedCapacityOptions = &types.ReservedCapacityOptionsRequest{
			ReservationTypes: []types.FleetReservationType{types.FleetReservationTypeInterruptibleCapacityReservation}}
	case req.CapacityType == apiv1.CapacityTypeSpot && req.Prioritized:
		in.SpotOptions = &types.SpotOptionsRequest{AllocationStrategy: types.SpotAllocationStrategyCapacityOptimizedPrioritized}
	case req.CapacityType == apiv1.CapacityTypeSpot:
		in.SpotOptions = &types.SpotOptionsRequest{AllocationStrategy: types.SpotAllocationStrategyPriceCapacityOptimized}
	case req.Prioritized:
		in.OnDemandOptions = &types.OnDemandOptionsRequest{AllocationStrategy: types.FleetOnDemandAllocationStrategyPrioritized}
	default:
		in.OnDemandOptions = &types.OnDemandOptionsRequest{AllocationStrategy: types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	if req.ClientToken != "" {
		in.ClientToken = aws.String(req.ClientToken)
	}
	if req.Context != "" {
		in.Context = aws.String(req.Context)
	}
	return in
}

// defaultTargetCapacityType: a default reservation is on-demand capacity,
// a capacity block capacity-block, an interruptible reservation
// reserved-capacity (Karpenter's CreateFleetInputBuilder).
func defaultTargetCapacityType(req LaunchRequest) types.DefaultTargetCapacityType {
	switch {
	case req.CapacityType != apiv1.CapacityTypeReserved:
		return types.DefaultTargetCapacityType(req.CapacityType)
	case req.ReservationType == apiv1.CapacityReservationTypeCapacityBlock:
		return types.DefaultTargetCapacityTypeCapacityBlock
	case req.Interruptible:
		return types.DefaultTargetCapacityTypeReservedCapacity
	}
	return types.DefaultTargetCapacityTypeOnDemand
}

// reservationOf is the reservation the request's config for the instance
// type in the zone targets ("" when none does).
func reservationOf(req LaunchRequest, instanceType, zone string) string {
	for _, lc := range req.configs() {
		for _, o := range lc.Overrides {
			if o.InstanceType == instanceType && o.Zone == zone {
				return lc.CapacityReservationID
			}
		}
	}
	return ""
}

// fleetErrors reads CreateFleet's per-override errors; the unfulfillable
// offerings are listed once each. An offering EC2 also refused for its
// inputs in the same answer (an instance profile it does not know yet, an
// image) is not among them: EC2 then adds an UnfulfillableCapacity "due to
// your request configuration" that says nothing of its capacity.
func fleetErrors(in []types.CreateFleetError, capacityType string, zoneOf map[string]string) ([]FleetError, []OfferingKey) {
	var fleetErrs []FleetError
	var unfulfillable []OfferingKey
	seen := map[OfferingKey]bool{}
	for _, e := range in {
		fe := fleetError(e, capacityType, zoneOf)
		if !IsUnfulfillableCode(fe.Code) {
			seen[fe.Offering] = true // misconfigured, not short of capacity
		}
		fleetErrs = append(fleetErrs, fe)
	}
	for _, fe := range fleetErrs {
		if IsUnfulfillableCode(fe.Code) && !seen[fe.Offering] {
			seen[fe.Offering] = true
			unfulfillable = append(unfulfillable, fe.Offering)
		}
	}
	return fleetErrs, unfulfillable
}

// fleetError reads one per-override error.
func fleetError(e types.CreateFleetError, capacityType string, zoneOf map[string]string) FleetError {
	fe := FleetError{Code: aws.ToString(e.ErrorCode), Message: aws.ToString(e.ErrorMessage)}
	fe.Offering.CapacityType = capacityType
	if e.Lifecycle != "" && capacityType != apiv1.CapacityTypeReserved {
		fe.Offering.CapacityType = string(e.Lifecycle) // reserved capacity is on-demand to EC2
	}
	if lo := e.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
		fe.Offering.InstanceType = string(lo.Overrides.InstanceType)
		fe.Offering.Zone = aws.ToString(lo.Overrides.AvailabilityZone)
		if fe.Offering.Zone == "" {
			fe.Offering.Zone = zoneOf[aws.ToString(lo.Overrides.SubnetId)]
		}
	}
	return fe
}

// launched lists the instances CreateFleet launched, in its order.
func launched(in []types.CreateFleetInstance, capacityType string, tags, zoneOf map[string]string) []Instance {
	var out []Instance
	for _, fi := range in {
		inst := Instance{Type: string(fi.InstanceType), CapacityType: capacityType, State: StatePending, Tags: tags}
		if fi.Lifecycle != "" && capacityType != apiv1.CapacityTypeReserved {
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
		for _, id := range fi.InstanceIds {
			inst.ID = id
			out = append(out, inst)
		}
	}
	return out
}

// unreserved are the offerings that are not reserved: a reservation out
// of capacity is that reservation's, not its (type, zone) offering's
// (Karpenter marks the reservation id unavailable, not the offering; the
// caller counts it used up).
func unreserved(offs []OfferingKey) []OfferingKey {
	var out []OfferingKey
	for _, o := range offs {
		if o.CapacityType != apiv1.CapacityTypeReserved {
			out = append(out, o)
		}
	}
	return out
}

func allUnfulfillable(errs []FleetError) bool {
	for _, e := range errs {
		if !IsUnfulfillableCode(e.Code) {
			return false
		}
	}
	return true
}
