package ec2

import (
	"maps"
	"strconv"
	"strings"

	"github.com/joinery/joinery/sim/awsauth"
)

// CreateFleet is authorized in two steps, as EC2 does: ec2:CreateFleet on
// the fleet, the instances and volumes it creates, its launch templates
// and the images and subnets its overrides name, before anything is
// served (a refusal fails the request, HTTP 403); then each override's
// launch, ec2:RunInstances on every resource the instance uses or
// creates, ec2:CreateTags (ec2:CreateAction=CreateFleet) for each
// resource type tagged at creation and iam:PassRole on the instance
// profile's roles; a refusal there is that override's
// UnauthorizedOperation in the answer's Errors, as AWS reports it
// ("with fleet error(s), UnauthorizedOperation").

// fleetChecksLocked are CreateFleet's request-level checks.
func (s *Server) fleetChecksLocked(f form) []awsauth.Check {
	specs := tagSpecs(f, "TagSpecification")
	check := func(kind, id string, keys awsauth.Keys) awsauth.Check {
		return awsauth.Check{Action: "ec2:CreateFleet", Resource: s.arn(kind, id), Context: keys.Context()}
	}
	out := []awsauth.Check{
		check("fleet", "*", s.keys().RequestTags(specs["fleet"])),
		check("instance", "*", s.keys().RequestTags(specs["instance"])),
		check("volume", "*", s.keys().RequestTags(specs["volume"])),
	}
	for _, ci := range f.indices("LaunchTemplateConfigs") {
		cp := at("LaunchTemplateConfigs", ci)
		if lt, err := s.resolveTemplateLocked(f.get(cp+".LaunchTemplateSpecification.LaunchTemplateId"),
			f.get(cp+".LaunchTemplateSpecification.LaunchTemplateName")); err == nil {
			out = append(out, check("launch-template", lt.ID, s.keys().ResourceTags("ec2", lt.Tags)))
		}
		for _, oi := range f.indices(cp + ".Overrides") {
			op := at(cp+".Overrides", oi)
			if id := f.get(op + ".ImageId"); id != "" {
				out = append(out, check("image", id, s.imageKeys(id)))
			}
			if sn := s.subnetByID(f.get(op + ".SubnetId")); sn != nil {
				out = append(out, check("subnet", sn.id, s.subnetKeys(sn)))
			}
		}
	}
	if tags := specs["fleet"]; len(tags) > 0 {
		out = append(out, awsauth.Check{Action: "ec2:CreateTags", Resource: s.arn("fleet", "*"),
			Context: s.keys().RequestTags(tags).Set("ec2:CreateAction", "CreateFleet").Context()})
	}
	return out
}

func (s *Server) imageKeys(id string) awsauth.Keys {
	k := s.keys().Set("ec2:ImageID", id).Set("ec2:ImageType", "machine").Set("ec2:RootDeviceType", "ebs")
	if im, ok := s.images[id]; ok {
		owner := im.OwnerAlias
		if owner == "" {
			owner = im.OwnerID
		}
		k.ResourceTags("ec2", im.Tags).Set("ec2:Owner", owner).Set("ec2:Public", strconv.FormatBool(im.Public))
	}
	return k
}

func (s *Server) subnetKeys(sn *subnet) awsauth.Keys {
	return s.keys().ResourceTags("ec2", sn.tags).Set("ec2:SubnetID", sn.id).Set("ec2:AvailabilityZone", sn.zone).
		Set("ec2:Vpc", s.arn("vpc", s.vpcID))
}

// authorizeLaunchesLocked marks each launchable override whose launch the
// caller may not make UnauthorizedOperation (nil caller: no guard).
func (s *Server) authorizeLaunchesLocked(c *awsauth.Caller, f form, req fleetRequest, overrides []*fleetOverride) {
	if c == nil {
		return
	}
	specs := tagSpecs(f, "TagSpecification")
	for _, o := range overrides {
		if o.errCode != "" {
			continue
		}
		for _, ct := range req.capacityTypes() {
			if fl := s.opts.Guard.Authorize(c, "ec2", "CreateFleet", s.launchChecksLocked(o, ct, specs)); fl != nil {
				o.fail(CodeUnauthorizedOperation, fl.EC2Message())
				break
			}
		}
	}
}

// capacityTypes are the capacity types the request launches.
func (r fleetRequest) capacityTypes() []string {
	var out []string
	if r.odTarget > 0 {
		out = append(out, CapacityTypeOnDemand)
	}
	if r.spotTarget > 0 {
		out = append(out, CapacityTypeSpot)
	}
	return out
}

// launchChecksLocked: what launching one instance from the override does,
// resource by resource (RunInstances' resource types), then the tags at
// creation and the role passed.
func (s *Server) launchChecksLocked(o *fleetOverride, capacityType string, specs map[string]map[string]string) []awsauth.Check {
	d := &o.lt.Data
	ltARN := s.arn("launch-template", o.lt.ID)
	created := map[string]map[string]string{ // resource type -> tags at creation
		"instance":          merged(d.TagSpecifications["instance"], specs["instance"]),
		"volume":            merged(d.TagSpecifications["volume"], specs["volume"]),
		"network-interface": merged(d.TagSpecifications["network-interface"], specs["network-interface"]),
	}
	if capacityType == CapacityTypeSpot {
		created["spot-instances-request"] = merged(d.TagSpecifications["spot-instances-request"], specs["spot-instances-request"])
	}
	run := func(kind, id string, keys awsauth.Keys) awsauth.Check {
		return awsauth.Check{Action: "ec2:RunInstances", Resource: s.arn(kind, id), Context: keys.Set("ec2:LaunchTemplate", ltARN).Context()}
	}
	out := []awsauth.Check{
		run("instance", "*", s.keys().RequestTags(created["instance"]).Set("ec2:InstanceType", o.instanceType).
			Set("ec2:AvailabilityZone", o.subnet.zone).Set("ec2:InstanceProfile", o.profileArn).
			Set("ec2:InstanceMarketType", marketType(capacityType)).Set("ec2:Tenancy", "default").Set("ec2:RootDeviceType", "ebs")),
		run("image", o.imageID, s.imageKeys(o.imageID)),
		run("subnet", o.subnet.id, s.subnetKeys(o.subnet)),
		run("network-interface", "*", s.keys().RequestTags(created["network-interface"]).Set("ec2:Subnet", s.arn("subnet", o.subnet.id)).
			Set("ec2:Vpc", s.arn("vpc", s.vpcID)).Set("ec2:AvailabilityZone", o.subnet.zone)),
		run("launch-template", o.lt.ID, s.keys().ResourceTags("ec2", o.lt.Tags)),
	}
	for _, g := range o.groups {
		if sg := s.groupBy(func(x *securityGroup) bool { return x.id == g }); sg != nil {
			out = append(out, run("security-group", g, s.keys().ResourceTags("ec2", sg.tags).Set("ec2:SecurityGroupID", g).Set("ec2:Vpc", s.arn("vpc", s.vpcID))))
		}
	}
	for _, v := range s.launchVolumes(o) {
		out = append(out, run("volume", "*", s.keys().RequestTags(created["volume"]).Set("ec2:VolumeType", v.VolumeType).
			Set("ec2:VolumeSize", strconv.FormatInt(v.VolumeSize, 10)).Set("ec2:ParentSnapshot", s.snapshotARN(v.SnapshotID)).
			Set("ec2:Encrypted", strconv.FormatBool(v.Encrypted != nil && *v.Encrypted)).Set("ec2:AvailabilityZone", o.subnet.zone)))
		if v.SnapshotID != "" {
			out = append(out, run("snapshot", v.SnapshotID, s.keys().Set("ec2:SnapshotID", v.SnapshotID)))
		}
	}
	if capacityType == CapacityTypeSpot {
		out = append(out, run("spot-instances-request", "*", s.keys().RequestTags(created["spot-instances-request"])))
	}
	if id := d.CapacityReservationID; id != "" {
		var tags map[string]string
		if r, ok := s.reservations[id]; ok {
			tags = r.Tags
		}
		out = append(out, run("capacity-reservation", id, s.keys().ResourceTags("ec2", tags)))
	}
	if g := o.group; g != nil {
		out = append(out, run("placement-group", g.Name, s.keys().ResourceTags("ec2", g.Tags).Set("ec2:PlacementGroupStrategy", g.Strategy)))
	}
	return append(out, s.launchTagsAndRoles(o, created)...)
}

// launchTagsAndRoles: ec2:CreateTags for each resource type tagged at the
// launch, and iam:PassRole for the roles of the instance profile.
func (s *Server) launchTagsAndRoles(o *fleetOverride, created map[string]map[string]string) []awsauth.Check {
	var out []awsauth.Check
	for _, kind := range sortedKeys(created) {
		if tags := created[kind]; len(tags) > 0 {
			out = append(out, awsauth.Check{Action: "ec2:CreateTags", Resource: s.arn(kind, "*"),
				Context: s.keys().RequestTags(tags).Set("ec2:CreateAction", "CreateFleet").Context()})
		}
	}
	if o.profileName != "" && s.opts.InstanceProfileRoles != nil {
		for _, role := range s.opts.InstanceProfileRoles(o.profileName) {
			out = append(out, awsauth.Check{Action: "iam:PassRole", Resource: role, Context: awsauth.Keys{}.
				Set("iam:PassedToService", "ec2.amazonaws.com").Set("iam:AssociatedResourceArn", s.arn("instance", "*")).Context()})
		}
	}
	return out
}

// launchVolumes are the EBS volumes an instance from the override gets:
// the image's root device (its snapshot), with the template's mappings
// over it.
func (s *Server) launchVolumes(o *fleetOverride) []BlockDevice {
	root := BlockDevice{DeviceName: "/dev/xvda", VolumeSize: 20, VolumeType: "gp3", SnapshotID: rootSnapshot(o.imageID)}
	byName := map[string]BlockDevice{root.DeviceName: root}
	order := []string{root.DeviceName}
	for _, b := range o.lt.Data.BlockDevices {
		if cur, ok := byName[b.DeviceName]; ok && b.SnapshotID == "" {
			b.SnapshotID = cur.SnapshotID
		} else if !ok {
			order = append(order, b.DeviceName)
		}
		byName[b.DeviceName] = b
	}
	out := make([]BlockDevice, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

// rootSnapshot is the snapshot behind an image's root device (as
// DescribeImages shows it).
func rootSnapshot(imageID string) string { return "snap-0" + strings.TrimPrefix(imageID, "ami-0") }

func (s *Server) snapshotARN(id string) string {
	if id == "" {
		return ""
	}
	return s.arn("snapshot", id)
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}
