package ec2

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/awsauth"
)

// Capacity types as CreateFleet spells them.
const (
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeSpot     = "spot"
)

// Allocation strategies CreateFleet accepts per capacity type. All but the
// prioritized ones take the cheapest pool that has capacity; the
// prioritized ones order by Priority (lowest number first), then price.
var (
	onDemandStrategies = map[string]bool{"lowest-price": true, "prioritized": true}
	spotStrategies     = map[string]bool{"lowest-price": true, "price-capacity-optimized": true,
		"capacity-optimized": true, "capacity-optimized-prioritized": true, "diversified": true}
)

// fleetRecord remembers a CreateFleet answer by ClientToken so a retried
// request returns the same instances (EC2 idempotency).
type fleetRecord struct {
	hash [32]byte
	resp createFleetResponse
	at   time.Time
}

// fleetOverride is one launch template override of a CreateFleet request.
type fleetOverride struct {
	order  int // position in the request
	spec   launchTemplateSpecXML
	xml    overridesXML
	lt     *LaunchTemplate
	it     *catalog.InstanceType // nil: not in the catalog
	subnet *subnet               // nil when errCode says the subnet does not exist

	instanceType, imageID   string // the override's, else the template's
	image                   *Image
	groups                  []string // security group ids the instance gets
	profileName, profileArn string
	errCode, errMsg         string  // why EC2 refuses this override, whatever the capacity
	priority                float64 // +Inf when unset
	maxPrice                float64 // 0 when unset
	weight                  float64 // units of capacity one instance gives (default 1)
	spot                    float64 // the spot price in the override's zone (0 without a type or subnet)
	reservation             string  // the capacity reservation the last check chose ("" none)
	onDemand                float64 // the region's on-demand price (0 without a type or subnet)
	// targetType is the request's DefaultTargetCapacityType; lifecycle
	// the reserved kind it asks for ("capacity-block",
	// "interruptible-capacity-reservation"; "" for on-demand and spot).
	targetType, lifecycle string
	group                 *placementGroup // the template's placement group (nil: none)
}

func (o *fleetOverride) fail(code, msg string) { o.errCode, o.errMsg = code, msg }

func (o *fleetOverride) price(capacityType string) float64 {
	if o.it == nil {
		return 0
	}
	if capacityType == CapacityTypeSpot {
		return o.spot
	}
	return o.onDemand
}

// fleetRequest is a CreateFleet request's validated top-level parameters.
type fleetRequest struct {
	// targetType is DefaultTargetCapacityType; lifecycle the reserved
	// kind it launches as ("" for spot and on-demand), on-demand capacity.
	targetType, lifecycle    string
	odTarget, spotTarget     int
	odStrategy, spotStrategy string
	instanceTags             map[string]string
}

func (s *Server) createFleet(f form) (withRequestID, error) { return s.createFleetAs(nil, f) }

// createFleetAs is CreateFleet for an authenticated caller: each
// override's launch is authorized for it (authz_fleet.go).
func (s *Server) createFleetAs(caller *awsauth.Caller, f form) (withRequestID, error) {
	req, err := parseFleetRequest(f)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	token := f.get("ClientToken")
	hash := requestHash(f)
	if token != "" {
		if rec, ok := s.fleets[token]; ok {
			if rec.hash != hash {
				return nil, newError(http.StatusBadRequest, CodeIdempotentParameterMismatch,
					"Arguments on this idempotent request are inconsistent with arguments used in previous request(s).")
			}
			resp := rec.resp
			return &resp, nil
		}
	}
	overrides, err := s.parseOverridesLocked(f)
	if err != nil {
		return nil, err
	}
	s.authorizeLaunchesLocked(caller, f, req, overrides)
	for _, o := range overrides {
		o.targetType, o.lifecycle = req.targetType, req.lifecycle
		if o.it != nil && o.subnet != nil {
			o.spot = s.spotPriceLocked(o.it, o.subnet.zone)
			o.onDemand = s.OnDemandPrice(o.it)
		}
	}
	resp := &createFleetResponse{FleetID: "fleet-" + s.uuidLocked()}
	now := s.now()
	var launched []*instance
	for _, bucket := range []fleetBucket{
		{CapacityTypeOnDemand, req.odStrategy, req.odTarget}, {CapacityTypeSpot, req.spotStrategy, req.spotTarget},
	} {
		launched = append(launched, s.fillBucketLocked(resp, bucket, overrides, token, req.instanceTags, now)...)
	}
	for _, in := range launched {
		s.bootLocked(in)
		s.scheduleBlockEndLocked(in)
	}
	if token != "" {
		// EC2 keeps the answer for the token, instances or not: the same
		// request again gets it back, errors included.
		s.fleets[token] = fleetRecord{hash: hash, resp: *resp, at: now}
	}
	return resp, nil
}

// parseFleetRequest validates Type, the target capacity, the allocation
// strategies and the tag specifications as EC2 does.
func parseFleetRequest(f form) (fleetRequest, error) {
	var req fleetRequest
	if t := f.get("Type"); t != "instant" {
		return req, newError(http.StatusBadRequest, CodeUnsupported,
			"The local EC2 endpoint supports only CreateFleet Type=instant, not %q", t)
	}
	total, ok, err := f.intParam("TargetCapacitySpecification.TotalTargetCapacity")
	if err != nil {
		return req, err
	}
	if !ok {
		return req, missingParameter("TargetCapacitySpecification.TotalTargetCapacity")
	}
	if total < 1 || total > 1000 {
		return req, invalidParameter("TotalTargetCapacity must be between 1 and 1000, not %d", total)
	}
	defaultType := f.get("TargetCapacitySpecification.DefaultTargetCapacityType")
	if req.lifecycle, err = reservedTarget(f, defaultType); err != nil {
		return req, err
	}
	req.targetType = defaultType
	if req.lifecycle != "" {
		defaultType = CapacityTypeOnDemand // reserved capacity is on-demand capacity
	}
	if req.odTarget, _, err = f.intParam("TargetCapacitySpecification.OnDemandTargetCapacity"); err != nil {
		return req, err
	}
	if req.spotTarget, _, err = f.intParam("TargetCapacitySpecification.SpotTargetCapacity"); err != nil {
		return req, err
	}
	if req.odTarget < 0 || req.spotTarget < 0 || req.odTarget+req.spotTarget > total {
		return req, invalidParameter("OnDemandTargetCapacity + SpotTargetCapacity exceeds TotalTargetCapacity")
	}
	if defaultType == CapacityTypeSpot {
		req.spotTarget = total - req.odTarget
	} else {
		req.odTarget = total - req.spotTarget
	}
	if req.odStrategy, err = strategy(f, "OnDemandOptions.AllocationStrategy", onDemandStrategies); err != nil {
		return req, err
	}
	if req.spotStrategy, err = strategy(f, "SpotOptions.AllocationStrategy", spotStrategies); err != nil {
		return req, err
	}
	req.instanceTags, err = fleetInstanceTags(f)
	return req, err
}

// reservedTarget checks DefaultTargetCapacityType and the options that
// go with it, returning the reserved lifecycle it asks for: capacity-block
// (no spot or on-demand options), or reserved-capacity with
// ReservedCapacityOptions.ReservationType interruptible-capacity-reservation
// (the only reserved kind Joinery's fleets ask for that way).
func reservedTarget(f form, defaultType string) (string, error) {
	types := f.strings("ReservedCapacityOptions.ReservationType")
	switch defaultType {
	case CapacityTypeSpot, CapacityTypeOnDemand:
		if len(types) > 0 {
			return "", newError(http.StatusBadRequest, CodeInvalidParameterCombination,
				"ReservedCapacityOptions can only be used with DefaultTargetCapacityType reserved-capacity")
		}
		return "", nil
	case LifecycleCapacityBlock:
		if len(types) > 0 || f.get("SpotOptions.AllocationStrategy") != "" {
			return "", newError(http.StatusBadRequest, CodeInvalidParameterCombination,
				"DefaultTargetCapacityType capacity-block takes no SpotOptions or ReservedCapacityOptions")
		}
		return LifecycleCapacityBlock, nil
	case "reserved-capacity":
		if len(types) == 0 {
			return "", missingParameter("ReservedCapacityOptions.ReservationTypes")
		}
		for _, t := range types {
			if t != LifecycleInterruptible {
				return "", invalidParameter("The local EC2 endpoint supports only ReservedCapacityOptions.ReservationType %s, not %q", LifecycleInterruptible, t)
			}
		}
		return LifecycleInterruptible, nil
	}
	return "", invalidParameter("DefaultTargetCapacityType must be spot, on-demand, capacity-block or reserved-capacity, not %q", defaultType)
}

func strategy(f form, param string, allowed map[string]bool) (string, error) {
	v := f.get(param)
	if v == "" {
		v = "lowest-price"
	}
	if !allowed[v] {
		return "", invalidParameter("Invalid %s %q", param, v)
	}
	return v, nil
}

// fleetInstanceTags checks the tag specifications and returns the instance's.
func fleetInstanceTags(f form) (map[string]string, error) {
	tags := map[string]string{}
	for _, i := range f.indices("TagSpecification") {
		p := at("TagSpecification", i)
		rt := f.get(p + ".ResourceType")
		switch rt {
		case "instance":
			maps.Copy(tags, f.tags(p+".Tag"))
		case "fleet", "volume", "network-interface", "spot-instances-request":
		default:
			return nil, invalidParameter("'%s' is not a valid taggable resource type for this operation.", rt)
		}
		if err := checkTagKeys(f.tags(p + ".Tag")); err != nil {
			return nil, err
		}
	}
	return tags, checkTagCount(nil, tags)
}

// fleetBucket is one capacity type's share of the target.
type fleetBucket struct {
	capacityType, strategy string
	target                 int
}

// fillBucketLocked launches the bucket's target from its overrides in
// strategy order, recording each override that fails as EC2 does.
func (s *Server) fillBucketLocked(resp *createFleetResponse, bucket fleetBucket, overrides []*fleetOverride,
	token string, instanceTags map[string]string, now time.Time) []*instance {
	if bucket.target == 0 {
		return nil
	}
	ordered := orderOverrides(overrides, bucket.capacityType, bucket.strategy)
	draw := newFleetDraw()
	failed := map[int]bool{}
	groups := map[int]int{} // override order → index in resp.Instances
	fail := func(o *fleetOverride, code, msg string) {
		failed[o.order] = true
		resp.Errors = append(resp.Errors, fleetErrorXML{
			LaunchTemplateAndOverrides: launchTemplateAndOverridesXML{o.spec, o.xml},
			Lifecycle:                  cmp.Or(o.lifecycle, bucket.capacityType), ErrorCode: code, ErrorMessage: msg,
		})
	}
	var launched []*instance
	var misconfigured *fleetOverride // the first override refused as InvalidParameterValue
	filled := 0.0
	for filled < float64(bucket.target) {
		var pick *fleetOverride
		for _, o := range ordered {
			if failed[o.order] {
				continue
			}
			if code, msg := s.checkOverrideLocked(o, bucket.capacityType, draw); code != "" {
				fail(o, code, msg)
				if o.errCode == CodeInvalidParameterValue && misconfigured == nil {
					misconfigured = o
				}
				continue
			}
			pick = o
			break
		}
		if pick == nil {
			break
		}
		in, err := s.launchLocked(pick, bucket.capacityType, resp.FleetID, token, instanceTags, now)
		if err != nil {
			code, msg := CodeInsufficientFreeAddresses, err.Error()
			if ae, ok := err.(*apiError); ok {
				code, msg = ae.Code, ae.Message
			}
			fail(pick, code, msg)
			continue
		}
		launched = append(launched, in)
		draw.launched(in, pick.it)
		gi, ok := groups[pick.order]
		if !ok {
			gi = len(resp.Instances)
			groups[pick.order] = gi
			resp.Instances = append(resp.Instances, fleetInstanceXML{
				LaunchTemplateAndOverrides: launchTemplateAndOverridesXML{pick.spec, pick.xml},
				Lifecycle:                  cmp.Or(pick.lifecycle, bucket.capacityType), InstanceType: pick.it.Name,
			})
		}
		g := &resp.Instances[gi]
		if len(g.InstanceIDs) > 0 {
			// Instances launched from one override share a reservation.
			in.ReservationID = s.instances[g.InstanceIDs[0]].ReservationID
		}
		g.InstanceIDs = append(g.InstanceIDs, in.ID)
		filled += pick.weight
	}
	if misconfigured != nil && filled < float64(bucket.target) {
		// EC2 sums such a request up as unfulfillable "due to your request
		// configuration", on an override it refused (seen beside an
		// instance profile it did not know: karpenter-provider-aws#3051).
		resp.Errors = append(resp.Errors, fleetErrorXML{
			LaunchTemplateAndOverrides: launchTemplateAndOverridesXML{misconfigured.spec, misconfigured.xml},
			Lifecycle:                  bucket.capacityType, ErrorCode: CodeUnfulfillableCapacity, ErrorMessage: msgUnfulfillableConfig,
		})
	}
	return launched
}

// parseOverridesLocked reads LaunchTemplateConfigs.N with their Overrides.
// Each config must name a launch template that exists, by name or id, at a
// version it has ($Latest, $Default or 1): otherwise the whole request
// fails, InvalidLaunchTemplateName.NotFoundException or
// InvalidLaunchTemplateId.NotFound. A config without Overrides launches the
// template as it is. An override's InstanceType and ImageId replace the
// template's; its subnet is its SubnetId, else its AvailabilityZone's
// subnet, else the first zone's. What makes one override unlaunchable (an
// unknown subnet, image or security group, an image of another
// architecture, an unknown instance profile) is recorded on it and reported
// in the answer's Errors, as EC2 does per override.
func (s *Server) parseOverridesLocked(f form) ([]*fleetOverride, error) {
	configs := f.indices("LaunchTemplateConfigs")
	if len(configs) == 0 {
		return nil, missingParameter("LaunchTemplateConfigs")
	}
	var out []*fleetOverride
	for _, ci := range configs {
		cp := at("LaunchTemplateConfigs", ci)
		spec := launchTemplateSpecXML{
			LaunchTemplateID:   f.get(cp + ".LaunchTemplateSpecification.LaunchTemplateId"),
			LaunchTemplateName: f.get(cp + ".LaunchTemplateSpecification.LaunchTemplateName"),
			Version:            f.get(cp + ".LaunchTemplateSpecification.Version"),
		}
		if spec.LaunchTemplateID == "" && spec.LaunchTemplateName == "" {
			return nil, missingParameter("LaunchTemplateConfigs.LaunchTemplateSpecification.LaunchTemplateName or LaunchTemplateId")
		}
		lt, err := s.resolveTemplateLocked(spec.LaunchTemplateID, spec.LaunchTemplateName)
		if err != nil {
			return nil, err
		}
		if err := checkVersion(lt, spec.Version); err != nil {
			return nil, err
		}
		ois := f.indices(cp + ".Overrides")
		if len(ois) == 0 {
			ois = []int{0} // the template alone
		}
		for _, oi := range ois {
			op := at(cp+".Overrides", oi)
			o := &fleetOverride{order: len(out), spec: spec, lt: lt, priority: inf, weight: 1}
			o.xml = overridesXML{
				InstanceType: f.get(op + ".InstanceType"), ImageID: f.get(op + ".ImageId"), SubnetID: f.get(op + ".SubnetId"),
				AvailabilityZone: f.get(op + ".AvailabilityZone"), MaxPrice: f.get(op + ".MaxPrice"),
				Priority: f.get(op + ".Priority"), WeightedCapacity: f.get(op + ".WeightedCapacity"),
			}
			o.instanceType = o.xml.InstanceType
			if o.instanceType == "" {
				o.instanceType = lt.Data.InstanceType
			}
			if o.instanceType == "" {
				return nil, missingParameter(op + ".InstanceType")
			}
			o.imageID = o.xml.ImageID
			if o.imageID == "" {
				o.imageID = lt.Data.ImageID
			}
			if o.imageID == "" {
				return nil, invalidParameter("Parameter 'amiIdList' cannot be empty.")
			}
			o.it, _ = s.opts.Catalog.Get(o.instanceType)
			if o.priority, err = floatParam(o.xml.Priority, inf, op+".Priority"); err != nil {
				return nil, err
			}
			if o.maxPrice, err = floatParam(o.xml.MaxPrice, 0, op+".MaxPrice"); err != nil {
				return nil, err
			}
			if o.weight, err = floatParam(o.xml.WeightedCapacity, 1, op+".WeightedCapacity"); err != nil {
				return nil, err
			}
			if o.weight <= 0 {
				return nil, invalidParameter("WeightedCapacity must be positive")
			}
			switch {
			case o.xml.SubnetID != "":
				o.subnet = s.subnetByID(o.xml.SubnetID)
				if o.subnet == nil {
					o.fail(CodeInvalidSubnetIDNotFound, fmt.Sprintf("The subnet ID '%s' does not exist", o.xml.SubnetID))
					break
				}
				if o.xml.AvailabilityZone != "" && o.xml.AvailabilityZone != o.subnet.zone {
					return nil, invalidParameter("Subnet %s is in %s, not in the requested Availability Zone %s",
						o.subnet.id, o.subnet.zone, o.xml.AvailabilityZone)
				}
			case o.xml.AvailabilityZone != "":
				o.subnet = s.subnetByZone(o.xml.AvailabilityZone)
				if o.subnet == nil {
					return nil, invalidParameter("Invalid availability zone: [%s]", o.xml.AvailabilityZone)
				}
			default:
				o.subnet = s.subnets[0]
			}
			if o.errCode == "" {
				s.checkLaunchInputsLocked(o)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// checkLaunchInputsLocked records on o the first reason EC2 would refuse to
// launch it, whatever the capacity: the image, its architecture, nested
// virtualization or Nitro Enclaves on a type without them, the security
// groups, the instance profile.
func (s *Server) checkLaunchInputsLocked(o *fleetOverride) {
	im, ok := s.images[o.imageID]
	if !ok || im.State != "available" {
		o.fail(CodeInvalidAMIIDNotFound, fmt.Sprintf("The image id '[%s]' does not exist", o.imageID))
		return
	}
	o.image = im
	if o.it != nil && ec2Arch(o.it.Arch) != im.Architecture {
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. "+
			"Specify an instance type and an AMI that have matching architectures, and try again. "+
			"You can use 'describe-instance-types' or 'describe-images' to discover the architecture of the instance type or AMI.",
			ec2Arch(o.it.Arch), im.Architecture))
		return
	}
	d := &o.lt.Data
	if o.it != nil && d.NestedVirtualization == NestedVirtualizationEnabled && !o.it.NestedVirtualization {
		o.fail(CodeUnsupportedOperation, nestedVirtualizationUnsupported(o.it.Name))
		return
	}
	if o.it != nil && d.EnclavesEnabled && !o.it.NitroEnclaves {
		o.fail(CodeUnsupportedOperation, enclavesUnsupported(o.it.Name))
		return
	}
	if s.checkPlacementLocked(o); o.errCode != "" {
		return
	}
	if len(d.SecurityGroupNames) > 0 {
		o.fail(CodeInvalidParameterCombination, "The parameter groupName cannot be used with the parameter subnet")
		return
	}
	for _, id := range d.SecurityGroupIDs {
		if s.groupBy(func(g *securityGroup) bool { return g.id == id }) == nil {
			o.fail(CodeInvalidGroupNotFound, fmt.Sprintf("The security group '%s' does not exist in VPC '%s'", id, s.vpcID))
			return
		}
	}
	if len(d.SecurityGroupIDs) == 0 {
		o.groups = []string{s.groups[0].id} // EC2 puts the VPC's default group on the instance
	} else {
		o.groups = d.SecurityGroupIDs
	}
	if s.checkProfileLocked(o, d); o.errCode == "" {
		checkPrefixCountLocked(o)
	}
	if o.errCode == "" && o.it != nil {
		if code, msg := interfacesRefusal(d.Interfaces, o.it); code != "" {
			o.fail(code, msg)
		}
	}
}

// checkProfileLocked records on o EC2's refusal of the template's instance
// profile: one IAM has not told EC2 about (yet), by name or ARN, or one
// whose role has not reached EC2.
func (s *Server) checkProfileLocked(o *fleetOverride, d *LaunchTemplateData) {
	name, arn := d.IamInstanceProfileName, d.IamInstanceProfileArn
	switch {
	case arn != "":
		name = arn[strings.LastIndexByte(arn, '/')+1:]
		if known, ok := s.instanceProfile(name); !ok || known != arn {
			o.fail(CodeInvalidParameterValue, fmt.Sprintf("Value (%s) for parameter iamInstanceProfile.arn is invalid. Invalid IAM Instance Profile ARN", arn))
			return
		}
	case name != "":
		var ok bool
		if arn, ok = s.instanceProfile(name); !ok {
			o.fail(CodeInvalidParameterValue, fmt.Sprintf("Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name", name))
			return
		}
	default:
		return
	}
	if has := s.opts.InstanceProfileHasRole; has != nil && !has(name) {
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("IAM Instance Profile \"%s\" has no associated IAM Roles", arn))
		return
	}
	o.profileName, o.profileArn = name, arn
}

// instanceProfile asks Options.InstanceProfile (nil: any name exists, with
// the ARN it would have at path /).
func (s *Server) instanceProfile(name string) (string, bool) {
	if s.opts.InstanceProfile == nil {
		return "arn:aws:iam::" + s.opts.AccountID + ":instance-profile/" + name, true
	}
	return s.opts.InstanceProfile(name)
}

var inf = 1e308

func floatParam(v string, def float64, name string) (float64, error) {
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, invalidParameter("Invalid value '%s' for %s", v, name)
	}
	return f, nil
}

// orderOverrides returns the overrides in the order the strategy tries
// them: by Priority for the prioritized strategies, then by price, then as
// sent.
func orderOverrides(in []*fleetOverride, capacityType, strategy string) []*fleetOverride {
	out := append([]*fleetOverride(nil), in...)
	prioritized := strings.HasSuffix(strategy, "prioritized")
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if prioritized && a.priority != b.priority {
			return a.priority < b.priority
		}
		return a.price(capacityType) < b.price(capacityType)
	})
	return out
}

// checkOverrideLocked returns the CreateFleet error code and message for an
// override that cannot launch now, or "" when it can.
func (s *Server) checkOverrideLocked(o *fleetOverride, capacityType string, draw *fleetDraw) (code, msg string) {
	if o.errCode != "" {
		return o.errCode, o.errMsg
	}
	if o.it == nil {
		return CodeUnsupported, fmt.Sprintf("Your requested instance type (%s) is not supported in your requested Availability Zone (%s).",
			o.instanceType, o.subnet.zone)
	}
	if !s.offered(o.it, o.subnet.zone) {
		return CodeUnsupported, unsupportedInZone(o.it.Name, o.subnet.zone, s.offeredZones(o.it))
	}
	if o.subnet.available() <= 0 {
		return CodeInsufficientFreeAddresses, insufficientAddresses(o.subnet.id)
	}
	if code, msg := prefixRoomCode(o); code != "" {
		return code, msg
	}
	if code, msg := s.placementRoomLocked(o); code != "" {
		return code, msg
	}
	if capacityType == CapacityTypeSpot && o.maxPrice > 0 && o.spot > o.maxPrice {
		return CodeSpotMaxPriceTooLow, fmt.Sprintf("Your Spot request price of %s is lower than the minimum required Spot request fulfillment price of %s.",
			formatFloat(o.maxPrice), formatFloat(o.spot))
	}
	id, code, msg := s.reservationForLaunchLocked(o, capacityType, time.Now())
	if code != "" {
		return code, msg
	}
	if o.reservation = id; id != "" {
		return "", "" // reserved capacity is there by definition
	}
	if code, msg := s.quotaCodeLocked(o.it, capacityType, draw.vcpus); code != "" {
		return code, msg
	}
	p := pool{o.it.Name, o.subnet.zone, capacityType}
	ok, seen := draw.pools[p]
	if !seen {
		ok = s.hasCapacityLocked(p)
		draw.pools[p] = ok
	}
	// A pool at its SetPoolCapacity limit is out of capacity (counted per
	// launch: one request may fill it).
	ok = ok && !s.poolFullLocked(p)
	if ok {
		return "", ""
	}
	if capacityType == CapacityTypeSpot {
		return CodeInsufficientInstanceCapacity, "There is no Spot capacity available that matches your request."
	}
	return CodeInsufficientInstanceCapacity, fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). "+
		"Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an "+
		"Availability Zone in your request or choosing a different Availability Zone.", o.it.Name, o.subnet.zone, o.it.Name)
}

// fleetDraw is what one CreateFleet request has learned of EC2's capacity:
// one draw per pool, and the vCPUs in use per quota.
type fleetDraw struct {
	pools map[pool]bool
	vcpus map[quotaKey]int
}

func newFleetDraw() *fleetDraw { return &fleetDraw{pools: map[pool]bool{}, vcpus: map[quotaKey]int{}} }

// launched counts a new instance against its quota.
func (d *fleetDraw) launched(in *instance, it *catalog.InstanceType) {
	k := quotaKey{catalog.QuotaBucket(it.Name), in.CapacityType}
	if _, ok := d.vcpus[k]; ok && in.CapacityReservationID == "" {
		d.vcpus[k] += it.VCPU
	}
}

// launchLocked creates one pending instance for the override.
func (s *Server) launchLocked(o *fleetOverride, capacityType, fleetID, token string, tags map[string]string, now time.Time) (*instance, error) {
	ip, err := o.subnet.allocate()
	if err != nil {
		return nil, err
	}
	prefixes, err := assignPrefixes(o.subnet, prefixCount(&o.lt.Data))
	if err != nil {
		o.subnet.release(ip)
		return nil, err
	}
	s.seq++
	id := s.resourceIDLocked("i")
	for s.instances[id] != nil {
		id = s.resourceIDLocked("i")
	}
	in := &instance{seq: s.seq, clientToken: token}
	in.Instance = Instance{
		ID: id, InstanceType: o.it.Name, Zone: o.subnet.zone, SubnetID: o.subnet.id,
		CapacityType: capacityType, State: StatePending, Architecture: ec2Arch(o.it.Arch),
		Price: o.price(capacityType), PrivateIP: ip, PrivateDNSName: s.privateDNSName(ip),
		LaunchTime: now, ReservationID: s.resourceIDLocked("r"), FleetID: fleetID, CapacityReservationID: o.reservation,
		CapacityReservationPreference: o.lt.Data.CapacityReservationPreference,
		Lifecycle:                     o.lifecycle, MarketType: o.lt.Data.MarketType,
		LaunchTemplateID: o.spec.LaunchTemplateID, LaunchTemplateName: o.spec.LaunchTemplateName,
		LaunchTemplateVersion: o.spec.Version,
		Tags:                  maps.Clone(o.lt.Data.TagSpecifications["instance"]),
		ImageID:               o.imageID, UserData: o.lt.Data.UserData,
		IAMInstanceProfile: o.profileName, IAMInstanceProfileArn: o.profileArn,
		SecurityGroupIDs:     append([]string(nil), o.groups...),
		MetadataOptions:      metadataWithDefaults(o.lt.Data.MetadataOptions, o.image),
		BlockDevices:         blockDevicesFor(o.lt.Data.BlockDevices),
		NetworkInterfaces:    max(o.lt.Data.NetworkInterfaces, 1),
		DetailedMonitoring:   o.lt.Data.DetailedMonitoring,
		NestedVirtualization: o.lt.Data.NestedVirtualization,
		EnclavesEnabled:      o.lt.Data.EnclavesEnabled,
		IPv4Prefixes:         prefixes,
	}
	if p := o.lt.Data.AssociatePublicIPAddress; p != nil && *p {
		in.PublicIP = publicIP(s.seq)
	}
	if err := s.attachInterfacesLocked(o, in); err != nil {
		o.subnet.release(ip)
		for _, p := range prefixes {
			o.subnet.releasePrefix(p)
		}
		return nil, err
	}
	if in.Tags == nil {
		in.Tags = map[string]string{}
	}
	maps.Copy(in.Tags, tags)
	if in.LaunchTemplateID == "" {
		in.LaunchTemplateID = o.lt.ID
	}
	if in.LaunchTemplateName == "" {
		in.LaunchTemplateName = o.lt.Name
	}
	in.Tags["aws:ec2:fleet-id"] = fleetID
	s.joinGroupLocked(o, in)
	in.visibleAt = s.visibleAfter(id)
	s.instances[id] = in
	return in, nil
}

// publicIP is the n-th public address the local EC2 hands out.
func publicIP(n uint64) string {
	return fmt.Sprintf("3.%d.%d.%d", 80+n>>16&0x3f, n>>8&0xff, n&0xff)
}

// metadataWithDefaults fills what the template left out as EC2 does:
// endpoint enabled, IPv6 disabled, hop limit 1 (2 for images that require
// IMDSv2, like AL2023), tokens optional unless the image requires v2.
func metadataWithDefaults(m *MetadataOptions, im *Image) *MetadataOptions {
	out := MetadataOptions{}
	if m != nil {
		out = *m
	}
	v2 := im != nil && im.Family == FamilyAL2023
	if out.HTTPEndpoint == "" {
		out.HTTPEndpoint = "enabled"
	}
	if out.HTTPProtocolIPv6 == "" {
		out.HTTPProtocolIPv6 = "disabled"
	}
	if out.HTTPPutResponseHopLimit == 0 {
		out.HTTPPutResponseHopLimit = 1
		if v2 {
			out.HTTPPutResponseHopLimit = 2
		}
	}
	if out.HTTPTokens == "" {
		out.HTTPTokens = "optional"
		if v2 {
			out.HTTPTokens = "required"
		}
	}
	if out.InstanceMetadataTags == "" {
		out.InstanceMetadataTags = "disabled"
	}
	return &out
}

// blockDevicesFor is the template's mappings, or the image's root volume
// (/dev/xvda, 20 GiB gp3) when it has none.
func blockDevicesFor(bds []BlockDevice) []BlockDevice {
	if len(bds) == 0 {
		del := true
		return []BlockDevice{{DeviceName: "/dev/xvda", VolumeSize: 20, VolumeType: "gp3", DeleteOnTermination: &del}}
	}
	return append([]BlockDevice(nil), bds...)
}

func insufficientAddresses(subnetID string) string {
	return fmt.Sprintf("There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", subnetID)
}

// privateDNSName is EC2's internal host name for an address:
// ip-10-0-64-4.ec2.internal in us-east-1, ip-...<region>.compute.internal elsewhere.
func (s *Server) privateDNSName(ip string) string {
	host := "ip-" + strings.ReplaceAll(ip, ".", "-")
	if s.opts.Region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + s.opts.Region + ".compute.internal"
}

// ec2Arch maps a Kubernetes architecture to EC2's name.
func ec2Arch(arch string) string {
	if arch == "amd64" {
		return "x86_64"
	}
	return arch
}

// requestHash identifies a request's parameters, ClientToken aside.
func requestHash(f form) [32]byte {
	keys := sortedKeys(f)
	var b strings.Builder
	for _, k := range keys {
		if k == "ClientToken" {
			continue
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strings.Join(f[k], ","))
		b.WriteByte('&')
	}
	return sha256.Sum256([]byte(b.String()))
}
