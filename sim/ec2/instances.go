package ec2

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Instance is a snapshot of one simulated EC2 instance.
type Instance struct {
	ID           string // "i-0" + 16 hex digits
	InstanceType string // e.g. "m5.large"
	Zone         string // e.g. "us-east-1a"
	SubnetID     string
	CapacityType string // "on-demand" or "spot"
	State        string // pending, running, shutting-down or terminated
	Architecture string // "x86_64" or "arm64"
	// Price is what the instance costs, USD/hour: the on-demand price or
	// the catalog's spot price at launch.
	Price          float64
	PrivateIP      string // e.g. "10.0.64.4"
	PrivateDNSName string // e.g. "ip-10-0-64-4.ec2.internal"
	LaunchTime     time.Time
	// TerminateTime is when TerminateInstances was accepted; zero before.
	TerminateTime time.Time
	ReservationID string
	// CapacityReservationID is the capacity reservation the instance was
	// launched into ("" for none): it holds one of its slots until terminated.
	CapacityReservationID string
	// CapacityReservationPreference is its launch template's preference
	// (capacity-reservations-only, open, none; "" for open, EC2's default),
	// which DescribeInstances shows.
	CapacityReservationPreference string `json:",omitempty"`
	// Lifecycle is "capacity-block" or "interruptible-capacity-reservation"
	// for an instance in such a reservation (its instanceLifecycle), "" else.
	Lifecycle string `json:",omitempty"`
	// MarketType is its launch template's InstanceMarketOptions.MarketType.
	MarketType            string `json:",omitempty"`
	FleetID               string
	LaunchTemplateID      string
	LaunchTemplateName    string
	LaunchTemplateVersion string
	Tags                  map[string]string

	// What the instance was launched with, from its launch template (and
	// the override's ImageId).
	ImageID string
	// UserData is base64, exactly as in the launch template.
	UserData              string
	IAMInstanceProfile    string // instance profile name ("" without one)
	IAMInstanceProfileArn string
	SecurityGroupIDs      []string
	MetadataOptions       *MetadataOptions
	BlockDevices          []BlockDevice
	// NetworkInterfaces is how many ENIs are attached at launch: the launch
	// template's network interfaces, at least the primary one.
	NetworkInterfaces int
	// Interfaces are the template's interfaces as attached (none: the
	// primary one EC2 gives by default).
	Interfaces []Interface `json:",omitempty"`
	// SecondaryIPs are the subnet addresses the instance holds besides
	// PrivateIP (AssignAddresses: the VPC CNI's ENIs and their addresses).
	SecondaryIPs []string `json:",omitempty"`
	// PublicIP is the address the primary interface got when the template
	// asked for one (the local subnets map none on launch).
	PublicIP string `json:",omitempty"`
	// DetailedMonitoring: the template enabled CloudWatch detailed monitoring.
	DetailedMonitoring bool `json:",omitempty"`
	// NestedVirtualization is the template's CpuOptions.NestedVirtualization
	// ("" when it sent none).
	NestedVirtualization string `json:",omitempty"`
	// EnclavesEnabled: the template enabled Nitro Enclaves.
	EnclavesEnabled bool `json:",omitempty"`
	// IPv4Prefixes are the /28 prefixes delegated to the primary interface
	// (the template's Ipv4PrefixCount), e.g. "10.0.64.16/28".
	IPv4Prefixes []string `json:",omitempty"`
	// PlacementGroupName and PlacementGroupID are the placement group the
	// instance was launched into ("" none); PartitionNumber its partition
	// in a partition group (0 otherwise).
	PlacementGroupName string `json:",omitempty"`
	PlacementGroupID   string `json:",omitempty"`
	PartitionNumber    int    `json:",omitempty"`
}

// instance is the server's record: the snapshot plus bookkeeping.
type instance struct {
	Instance
	seq          uint64
	timer        *time.Timer // pending→running or shutting-down→terminated
	terminatedAt time.Time   // when it became terminated (retention)
	clientToken  string
	// visibleAt is when the API first shows the instance (zero: at once);
	// tagWrites are CreateTags writes tag filters do not see yet.
	visibleAt time.Time
	tagWrites map[string]tagWrite
}

func (in *instance) snapshot() Instance {
	out := in.Instance
	out.Tags = maps.Clone(in.Tags)
	out.SecurityGroupIDs = append([]string(nil), in.SecurityGroupIDs...)
	out.BlockDevices = append([]BlockDevice(nil), in.BlockDevices...)
	out.MetadataOptions = clonePtr(in.MetadataOptions)
	out.SecondaryIPs = append([]string(nil), in.SecondaryIPs...)
	out.IPv4Prefixes = append([]string(nil), in.IPv4Prefixes...)
	out.Interfaces = append([]Interface(nil), in.Interfaces...)
	return out
}

// Instances returns a snapshot of every instance still visible (terminated
// ones until TerminatedRetention has passed), in launch order.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshots(s.sortedInstancesLocked(), (*instance).snapshot)
}

// Instance returns a snapshot of the instance with the given id.
func (s *Server) Instance(id string) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshotOf(s.instances, id, (*instance).snapshot)
}

// sortedInstancesLocked prunes terminated instances past retention and
// returns the rest in launch order.
func (s *Server) sortedInstancesLocked() []*instance {
	now := time.Now()
	out := make([]*instance, 0, len(s.instances))
	for id, in := range s.instances {
		if in.State == StateTerminated && now.Sub(in.terminatedAt) > s.opts.TerminatedRetention {
			delete(s.instances, id)
			continue
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// bootLocked schedules pending→running after BootDelay (or does it now).
func (s *Server) bootLocked(in *instance) {
	if s.opts.BootDelay <= 0 {
		s.transitionLocked(in, StatePending, StateRunning, s.opts.OnRunning)
		return
	}
	id := in.ID
	in.timer = time.AfterFunc(s.opts.BootDelay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if in, ok := s.instances[id]; ok && !s.closed {
			in.timer = nil
			s.transitionLocked(in, StatePending, StateRunning, s.opts.OnRunning)
		}
	})
}

// shutdownLocked moves a pending or running instance to shutting-down and
// schedules shutting-down→terminated after TerminateDelay.
func (s *Server) shutdownLocked(in *instance) {
	if in.timer != nil {
		in.timer.Stop()
		in.timer = nil
	}
	in.State = StateShuttingDown
	in.TerminateTime = time.Now()
	s.finishShutdownLocked(in)
}

// finishShutdownLocked schedules shutting-down→terminated after TerminateDelay.
func (s *Server) finishShutdownLocked(in *instance) {
	if s.opts.TerminateDelay <= 0 {
		s.terminateLocked(in)
		return
	}
	id := in.ID
	in.timer = time.AfterFunc(s.opts.TerminateDelay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if in, ok := s.instances[id]; ok && !s.closed && in.State == StateShuttingDown {
			in.timer = nil
			s.terminateLocked(in)
		}
	})
}

func (s *Server) terminateLocked(in *instance) {
	if sn := s.subnetByID(in.SubnetID); sn != nil {
		sn.release(in.PrivateIP)
		for _, ip := range in.SecondaryIPs {
			sn.release(ip)
		}
		for _, p := range in.IPv4Prefixes {
			sn.releasePrefix(p)
		}
		s.releaseInterfacesLocked(sn, in.Interfaces)
	}
	in.SecondaryIPs, in.IPv4Prefixes = nil, nil
	in.terminatedAt = time.Now()
	s.transitionLocked(in, StateShuttingDown, StateTerminated, s.opts.OnTerminated)
}

// transitionLocked moves in from one state to the next and fires hook, on
// its own goroutine, with the new snapshot.
func (s *Server) transitionLocked(in *instance, from, to string, hook func(Instance)) {
	if in.State != from {
		return
	}
	in.State = to
	if hook != nil && !s.closed {
		snap := in.snapshot()
		go hook(snap)
	}
}

var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)

// lookupInstancesLocked resolves ids, failing like EC2: a malformed id is
// InvalidInstanceID.Malformed, unknown ids (and ids still in their
// consistency window) are InvalidInstanceID.NotFound (the whole request
// fails, nothing is done).
func (s *Server) lookupInstancesLocked(ids []string) ([]*instance, error) {
	var missing []string
	var out []*instance
	seen := map[string]bool{}
	for _, id := range ids {
		if !instanceIDPattern.MatchString(id) {
			return nil, newError(http.StatusBadRequest, CodeInvalidInstanceIDMalformed, "Invalid id: %q", id)
		}
		in, ok := s.instances[id]
		if !ok || !s.visible(in.visibleAt) {
			missing = append(missing, id)
			continue
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, in)
		}
	}
	switch len(missing) {
	case 0:
		return out, nil
	case 1:
		return nil, newError(http.StatusBadRequest, CodeInvalidInstanceIDNotFound, "The instance ID '%s' does not exist", missing[0])
	default:
		return nil, newError(http.StatusBadRequest, CodeInvalidInstanceIDNotFound,
			"The instance IDs '%s' do not exist", strings.Join(missing, ", "))
	}
}

var instanceFields = fields[*instance]{
	"instance-id":              func(in *instance) []string { return []string{in.ID} },
	"instance-state-name":      func(in *instance) []string { return []string{in.State} },
	"instance-state-code":      func(in *instance) []string { return []string{itoa(stateCodes[in.State])} },
	"instance-type":            func(in *instance) []string { return []string{in.InstanceType} },
	"availability-zone":        func(in *instance) []string { return []string{in.Zone} },
	"subnet-id":                func(in *instance) []string { return []string{in.SubnetID} },
	"private-dns-name":         func(in *instance) []string { return []string{in.PrivateDNSName} },
	"private-ip-address":       func(in *instance) []string { return []string{in.PrivateIP} },
	"reservation-id":           func(in *instance) []string { return []string{in.ReservationID} },
	"architecture":             func(in *instance) []string { return []string{in.Architecture} },
	"image-id":                 func(in *instance) []string { return nonEmpty(in.ImageID) },
	"instance.group-id":        func(in *instance) []string { return in.SecurityGroupIDs },
	"iam-instance-profile.arn": func(in *instance) []string { return nonEmpty(in.IAMInstanceProfileArn) },
	"placement-group-name":     func(in *instance) []string { return nonEmpty(in.PlacementGroupName) },
	"placement-partition-number": func(in *instance) []string {
		if in.PartitionNumber == 0 {
			return nil
		}
		return []string{itoa(in.PartitionNumber)}
	},
	"instance-lifecycle": func(in *instance) []string {
		if in.CapacityType == "spot" {
			return []string{"spot"}
		}
		return nil
	},
}

// requestedInstancesLocked are the instances a Describe call names
// (InstanceId, each one EC2 can see or InvalidInstanceID.NotFound) or
// every visible one in launch order, with the page size asked for
// (MaxResults, which EC2 refuses beside InstanceId).
func (s *Server) requestedInstancesLocked(f form) ([]*instance, int, error) {
	max, hasMax, err := f.intParam("MaxResults")
	if err != nil {
		return nil, 0, err
	}
	ids := f.strings("InstanceId")
	if hasMax && len(ids) > 0 {
		return nil, 0, newError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter instancesSet cannot be used with the parameter maxResults")
	}
	if len(ids) > 0 {
		items, err := s.lookupInstancesLocked(ids)
		return items, max, err
	}
	return s.visibleInstancesLocked(s.sortedInstancesLocked()), max, nil
}

func (s *Server) describeInstances(f form) (withRequestID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items, max, err := s.requestedInstancesLocked(f)
	if err != nil {
		return nil, err
	}
	fs := fields[*instance]{"vpc-id": func(*instance) []string { return []string{s.vpcID} }}
	for k, v := range instanceFields {
		fs[k] = v
	}
	items, err = applyFilters(items, f.filters(), fs, s.filterTagsLocked)
	if err != nil {
		return nil, err
	}
	items, next, err := page(items, func(in *instance) uint64 { return in.seq }, "instances", f.get("NextToken"), max, 0, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeInstancesResponse{NextToken: next}
	for _, in := range items {
		n := len(out.Reservations)
		if n == 0 || out.Reservations[n-1].ReservationID != in.ReservationID {
			out.Reservations = append(out.Reservations, reservationXML{
				ReservationID: in.ReservationID, OwnerID: s.opts.AccountID, RequesterID: "260004250017",
			})
			n++
		}
		r := &out.Reservations[n-1]
		r.Instances = append(r.Instances, s.instanceXMLLocked(in))
	}
	return out, nil
}

func (s *Server) instanceXMLLocked(in *instance) instanceXML {
	x := instanceXML{
		InstanceID: in.ID, ImageID: in.ImageID, InstanceState: state(in.State),
		PrivateDNSName: in.PrivateDNSName, InstanceType: in.InstanceType,
		LaunchTime: in.LaunchTime.UTC().Format("2006-01-02T15:04:05.000Z"),
		Placement: placementXML{AvailabilityZone: in.Zone, AvailabilityZoneID: s.zoneIDOf(in.Zone), Tenancy: "default",
			GroupName: in.PlacementGroupName, GroupID: in.PlacementGroupID, PartitionNumber: in.PartitionNumber},
		SubnetID: in.SubnetID, VpcID: s.vpcID, PrivateIPAddress: in.PrivateIP,
		Architecture: in.Architecture, RootDeviceType: "ebs", RootDeviceName: "/dev/xvda",
		ClientToken: in.clientToken, Tags: tagSet(in.Tags), VirtualizationType: "hvm", Hypervisor: "xen",
		Monitoring: monitoringXML{State: "disabled"}, IPAddress: in.PublicIP,
	}
	if in.NestedVirtualization != "" {
		x.CPUOptions = &cpuOptionsXML{NestedVirtualization: in.NestedVirtualization}
	}
	if in.DetailedMonitoring {
		x.Monitoring.State = "enabled"
	}
	x.EnclaveOptions.Enabled = in.EnclavesEnabled
	for _, id := range in.SecurityGroupIDs {
		g := groupXML{GroupID: id}
		if sg := s.groupBy(func(g *securityGroup) bool { return g.id == id }); sg != nil {
			g.GroupName = sg.name
		}
		x.Groups = append(x.Groups, g)
	}
	if in.IAMInstanceProfileArn != "" {
		sum := sha256.Sum256([]byte(in.IAMInstanceProfileArn))
		x.IamInstanceProfile = &iamInstanceProfileXML{Arn: in.IAMInstanceProfileArn,
			ID: "AIPA" + strings.ToUpper(hex.EncodeToString(sum[:9]))[:17]}
	}
	if m := in.MetadataOptions; m != nil {
		x.MetadataOptions = &instanceMetadataOptionsXML{State: "applied", HTTPTokens: m.HTTPTokens,
			HTTPPutResponseHopLimit: m.HTTPPutResponseHopLimit, HTTPEndpoint: m.HTTPEndpoint,
			HTTPProtocolIPv6: m.HTTPProtocolIPv6, InstanceMetadataTags: m.InstanceMetadataTags}
	}
	if in.State != StateTerminated {
		for i, b := range in.BlockDevices {
			sum := sha256.Sum256([]byte(in.ID + "/" + b.DeviceName + strconv.Itoa(i)))
			x.BlockDevices = append(x.BlockDevices, instanceBlockDeviceXML{DeviceName: b.DeviceName, EBS: instanceEBSDeviceXML{
				VolumeID: "vol-0" + hex.EncodeToString(sum[:8]), Status: "attached", AttachTime: x.LaunchTime,
				DeleteOnTermination: b.DeleteOnTermination == nil || *b.DeleteOnTermination}})
		}
	}
	x.CapacityReservationID = s.runningReservationLocked(in, time.Now())
	x.ReservationSpec = reservationSpecOf(in, x.CapacityReservationID)
	x.InstanceLifecycle = in.Lifecycle
	if in.CapacityType == "spot" {
		x.InstanceLifecycle = "spot"
		x.SpotInstanceRequestID = "sir-" + strings.TrimPrefix(in.ID, "i-0")[:8]
	}
	if in.State == StateShuttingDown || in.State == StateTerminated {
		x.Reason = "User initiated (" + in.TerminateTime.UTC().Format("2006-01-02 15:04:05 MST") + ")"
		x.StateReason = &stateReasonXML{Code: "Client.UserInitiatedShutdown", Message: "Client.UserInitiatedShutdown: User initiated shutdown"}
	}
	if in.State == StateTerminated {
		x.PrivateDNSName, x.PrivateIPAddress, x.SubnetID, x.VpcID, x.Groups = "", "", "", "", nil
	} else {
		x.NetworkInterfaces = s.interfacesXML(in, x)
	}
	return x
}

// primaryInterfaceXML is the instance's primary network interface (device
// 0): its address, security groups and delegated prefixes.
func (s *Server) primaryInterfaceXML(in *instance, x instanceXML) instanceNetworkInterfaceXML {
	sum := sha256.Sum256([]byte(in.ID + "/eni"))
	id := hex.EncodeToString(sum[:9])[:17]
	ni := instanceNetworkInterfaceXML{
		NetworkInterfaceID: "eni-" + id, SubnetID: in.SubnetID, VpcID: s.vpcID, OwnerID: s.opts.AccountID,
		Status: "in-use", PrivateIPAddress: in.PrivateIP, PrivateDNSName: in.PrivateDNSName, InterfaceType: "interface",
		Attachment: niAttachmentXML{AttachmentID: "eni-attach-" + id, Status: "attached", AttachTime: x.LaunchTime, DeleteOnTermination: true},
		Groups:     x.Groups,
		PrivateIPs: []niPrivateAddressXML{{PrivateIPAddress: in.PrivateIP, PrivateDNSName: in.PrivateDNSName, Primary: true}},
	}
	for _, p := range in.IPv4Prefixes {
		ni.IPv4Prefixes = append(ni.IPv4Prefixes, ipv4PrefixXML{IPv4Prefix: p})
	}
	return ni
}

func (s *Server) terminateInstances(f form) (withRequestID, error) {
	ids := f.strings("InstanceId")
	if len(ids) == 0 {
		return nil, missingParameter("InstanceId")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items, err := s.lookupInstancesLocked(ids)
	if err != nil {
		return nil, err
	}
	out := &terminateInstancesResponse{}
	for _, in := range items {
		prev := in.State
		if prev == StatePending || prev == StateRunning {
			s.shutdownLocked(in)
		}
		out.Instances = append(out.Instances, stateChangeXML{InstanceID: in.ID, PreviousState: state(prev), CurrentState: state(in.State)})
	}
	return out, nil
}

func (s *Server) createTags(f form) (withRequestID, error) {
	ids := f.strings("ResourceId")
	if len(ids) == 0 {
		return nil, missingParameter("ResourceId")
	}
	tags := f.tags("Tag")
	if len(tags) == 0 {
		return nil, missingParameter("Tag")
	}
	if err := checkTagKeys(tags); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var targets []map[string]string
	var insts []*instance
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, "i-"):
			items, err := s.lookupInstancesLocked([]string{id})
			if err != nil {
				return nil, err
			}
			insts = append(insts, items[0])
		case strings.HasPrefix(id, "subnet-"):
			sn := s.subnetByID(id)
			if sn == nil {
				return nil, newError(http.StatusBadRequest, CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", id)
			}
			targets = append(targets, sn.tags)
		case strings.HasPrefix(id, "sg-"):
			g := s.groupBy(func(g *securityGroup) bool { return g.id == id })
			if g == nil {
				return nil, newError(http.StatusBadRequest, CodeInvalidGroupNotFound, "The security group '%s' does not exist", id)
			}
			targets = append(targets, g.tags)
		default:
			return nil, newError(http.StatusBadRequest, "InvalidID", "The ID '%s' is not valid", id)
		}
	}
	for _, t := range targets {
		if err := checkTagCount(t, tags); err != nil {
			return nil, err
		}
	}
	for _, in := range insts {
		if err := checkTagCount(in.Tags, tags); err != nil {
			return nil, err
		}
	}
	for _, t := range targets {
		maps.Copy(t, tags)
	}
	for _, in := range insts {
		s.writeTagsLocked(in, tags)
	}
	return &returnResponse{Return: true}, nil
}

// checkTagKeys refuses what EC2 refuses of any tag: an empty key, one
// over 128 characters or with the reserved "aws:" prefix, a value over
// 256 characters, and more than 50 tags for one resource.
func checkTagKeys(tags map[string]string) error {
	for k, v := range tags {
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return invalidParameter("Tag keys starting with 'aws:' are reserved for internal use")
		}
		if k == "" {
			return invalidParameter("Tag key must not be empty")
		}
		if utf8.RuneCountInString(k) > 128 {
			return invalidParameter("Tag key exceeds the maximum length of 128 characters")
		}
		if utf8.RuneCountInString(v) > 256 {
			return invalidParameter("Tag value exceeds the maximum length of 256 characters")
		}
	}
	return checkTagCount(nil, tags)
}

// checkTagCount refuses tags that would give a resource more than EC2's
// 50 ("aws:" tags do not count).
func checkTagCount(have, adding map[string]string) error {
	n := len(adding)
	for k := range have {
		if _, again := adding[k]; !again && !strings.HasPrefix(strings.ToLower(k), "aws:") {
			n++
		}
	}
	if n > 50 {
		return newError(http.StatusBadRequest, CodeTagLimitExceeded, "The maximum number of Tags for a resource has been reached.")
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// describeInstanceAttribute answers the userData attribute (others are
// InvalidParameterValue here).
func (s *Server) describeInstanceAttribute(f form) (withRequestID, error) {
	id, attr := f.get("InstanceId"), f.get("Attribute")
	if id == "" {
		return nil, missingParameter("InstanceId")
	}
	if attr == "" {
		return nil, missingParameter("Attribute")
	}
	if attr != "userData" {
		return nil, invalidParameter("Value (%s) for parameter attribute is invalid. The local EC2 endpoint answers only userData.", attr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items, err := s.lookupInstancesLocked([]string{id})
	if err != nil {
		return nil, err
	}
	out := &describeInstanceAttributeResponse{InstanceID: id}
	if ud := items[0].UserData; ud != "" {
		out.UserData = &attributeValueXML{Value: ud}
	} else {
		out.UserData = &attributeValueXML{}
	}
	return out, nil
}
