package ec2

import (
	"cmp"
	"encoding/base64"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LaunchTemplate is one launch template (a single version, 1, which is both
// $Default and $Latest: the endpoint has no CreateLaunchTemplateVersion).
type LaunchTemplate struct {
	ID         string // "lt-0" + 16 hex digits
	Name       string
	CreateTime time.Time
	// Tags are the template's own tags (TagSpecification ResourceType
	// launch-template of CreateLaunchTemplate).
	Tags map[string]string
	Data LaunchTemplateData
	seq  uint64
	// visibleAt is when the API first shows a template created over it
	// (zero: at once; see consistency.go).
	visibleAt time.Time
}

// LaunchTemplateData is what the endpoint keeps of a template's
// LaunchTemplateData: what an instance launched from it gets.
type LaunchTemplateData struct {
	ImageID      string
	InstanceType string
	// UserData is base64, exactly as sent.
	UserData string
	// IamInstanceProfileName / Arn are the IamInstanceProfile fields as sent
	// (one of them, normally).
	IamInstanceProfileName string
	IamInstanceProfileArn  string
	// SecurityGroupIDs are the SecurityGroupId list, or the groups of the
	// network interfaces (NetworkInterface.N.SecurityGroupId) when those
	// carry them.
	SecurityGroupIDs []string
	// SecurityGroupNames is the SecurityGroup (name) list.
	SecurityGroupNames []string
	// NetworkInterfaces is how many network interfaces the data specifies,
	// Interfaces each one's card, device and type (interfaces.go).
	NetworkInterfaces int
	Interfaces        []TemplateInterface
	// AssociatePublicIPAddress and ConnectionTracking are the primary
	// interface's (device 0): nil, the subnet's setting and EC2's timeouts.
	AssociatePublicIPAddress *bool
	ConnectionTracking       *ConnectionTracking
	// IPv4PrefixCount and IPv6PrefixCount are the primary interface's
	// prefix counts (nil: not sent).
	IPv4PrefixCount, IPv6PrefixCount *int64
	// DetailedMonitoring is Monitoring.Enabled.
	DetailedMonitoring bool
	// NestedVirtualization is CpuOptions.NestedVirtualization: "enabled",
	// "disabled" or "" (not sent).
	NestedVirtualization string
	// EnclavesEnabled is EnclaveOptions.Enabled (Nitro Enclaves).
	EnclavesEnabled bool
	BlockDevices    []BlockDevice
	MetadataOptions *MetadataOptions
	// CapacityReservationPreference ("capacity-reservations-only", "open",
	// "none"; "" as open) and CapacityReservationID (the target) are
	// CapacityReservationSpecification's.
	CapacityReservationPreference string
	CapacityReservationID         string
	// PlacementGroupName / PlacementGroupID name the placement group
	// (Placement.GroupName / GroupId; one of them), PartitionNumber the
	// partition (Placement.PartitionNumber; 0: EC2 picks).
	PlacementGroupName string
	PlacementGroupID   string
	PartitionNumber    int
	// MarketType is InstanceMarketOptions.MarketType: "capacity-block" or
	// "interruptible-capacity-reservation" for those reservations ("" none;
	// "spot" templates are refused: CreateFleet sets the market itself).
	MarketType string `json:",omitempty"`
	// TagSpecifications are the instance-side tags by resource type
	// ("instance", "volume", "network-interface", ...).
	TagSpecifications map[string]map[string]string
}

// ConnectionTracking are an interface's idle timeouts, seconds (0: EC2's
// default).
type ConnectionTracking struct {
	TCPEstablished, UDPStream, UDP int64
}

// BlockDevice is one block device mapping (EBS).
type BlockDevice struct {
	DeviceName          string
	VolumeSize          int64 // GiB; 0: the snapshot's size
	VolumeType          string
	IOPS                int64
	Throughput          int64
	Encrypted           *bool
	DeleteOnTermination *bool
	KMSKeyID            string
	SnapshotID          string
	// InitializationRate is the volume initialization rate, MiB/s (0: none).
	InitializationRate int64
}

// MetadataOptions are the instance metadata service options.
type MetadataOptions struct {
	HTTPEndpoint            string
	HTTPProtocolIPv6        string
	HTTPPutResponseHopLimit int64
	HTTPTokens              string
	InstanceMetadataTags    string
}

func (lt *LaunchTemplate) snapshot() LaunchTemplate {
	out := *lt
	out.Tags = maps.Clone(lt.Tags)
	out.Data = lt.Data.clone()
	return out
}

func (d LaunchTemplateData) clone() LaunchTemplateData {
	d.SecurityGroupIDs = append([]string(nil), d.SecurityGroupIDs...)
	d.SecurityGroupNames = append([]string(nil), d.SecurityGroupNames...)
	d.BlockDevices = append([]BlockDevice(nil), d.BlockDevices...)
	d.MetadataOptions = clonePtr(d.MetadataOptions)
	d.IPv4PrefixCount, d.IPv6PrefixCount = clonePtr(d.IPv4PrefixCount), clonePtr(d.IPv6PrefixCount)
	if d.TagSpecifications != nil {
		ts := make(map[string]map[string]string, len(d.TagSpecifications))
		for k, v := range d.TagSpecifications {
			ts[k] = maps.Clone(v)
		}
		d.TagSpecifications = ts
	}
	return d
}

// LaunchTemplates returns every launch template, in creation order.
func (s *Server) LaunchTemplates() []LaunchTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshots(s.sortedTemplatesLocked(), (*LaunchTemplate).snapshot)
}

// LaunchTemplate returns the template with the given name or id.
func (s *Server) LaunchTemplate(nameOrID string) (LaunchTemplate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lt := range s.templates {
		if lt.ID == nameOrID || lt.Name == nameOrID {
			return lt.snapshot(), true
		}
	}
	return LaunchTemplate{}, false
}

// CreateLaunchTemplate creates a template in process, as the API would
// (tests that are not about templates use it to have one to launch from);
// it is visible at once, whatever the consistency window.
func (s *Server) CreateLaunchTemplate(name string, data LaunchTemplateData, tags map[string]string) (LaunchTemplate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lt, err := s.createTemplateLocked(name, data.clone(), maps.Clone(tags))
	if err != nil {
		return LaunchTemplate{}, err
	}
	return lt.snapshot(), nil
}

var templateName = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

// maxUserData is EC2's limit on user data, before base64 encoding.
const maxUserData = 16 * 1024

func (s *Server) createTemplateLocked(name string, data LaunchTemplateData, tags map[string]string) (*LaunchTemplate, error) {
	if !templateName.MatchString(name) {
		return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateNameMalformed,
			"A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.")
	}
	for _, lt := range s.templates {
		if lt.Name == name {
			return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateNameAlreadyExists, "Launch template name already in use.")
		}
	}
	if data.UserData != "" {
		raw, err := base64.StdEncoding.DecodeString(data.UserData)
		if err != nil {
			return nil, newError(http.StatusBadRequest, CodeInvalidUserDataMalformed, "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > maxUserData {
			return nil, newError(http.StatusBadRequest, CodeInvalidUserDataMalformed, "User data is limited to %d bytes", maxUserData)
		}
	}
	if tags == nil {
		tags = map[string]string{}
	}
	if err := checkTagKeys(tags); err != nil {
		return nil, err
	}
	id := s.resourceIDLocked("lt")
	for s.templateByIDLocked(id) != nil {
		id = s.resourceIDLocked("lt")
	}
	s.seq++
	lt := &LaunchTemplate{ID: id, Name: name, CreateTime: s.now().UTC().Truncate(time.Second), Tags: tags, Data: data, seq: s.seq}
	s.templates[id] = lt
	return lt, nil
}

func (s *Server) templateByIDLocked(id string) *LaunchTemplate { return s.templates[id] }

// visibleTemplateLocked is the template with the id, or else the name, the
// API shows now (nil: none, or not yet visible).
func (s *Server) visibleTemplateLocked(id, name string) *LaunchTemplate {
	for _, lt := range s.templates {
		if (lt.ID == id || (id == "" && lt.Name == name)) && s.visible(lt.visibleAt) {
			return lt
		}
	}
	return nil
}

func (s *Server) sortedTemplatesLocked() []*LaunchTemplate {
	return slices.SortedFunc(maps.Values(s.templates), func(a, b *LaunchTemplate) int { return cmp.Compare(a.seq, b.seq) })
}

var launchTemplateIDPattern = regexp.MustCompile(`^lt-[0-9a-f]{17}$`)

// resolveTemplateLocked finds the template a request names, failing as EC2
// does: an unknown name is InvalidLaunchTemplateName.NotFoundException, an
// unknown id InvalidLaunchTemplateId.NotFound, a malformed id
// InvalidLaunchTemplateId.Malformed.
func (s *Server) resolveTemplateLocked(id, name string) (*LaunchTemplate, error) {
	switch {
	case id != "" && name != "":
		return nil, newError(http.StatusBadRequest, "InvalidParameterCombination",
			"Only one of launchTemplateId or launchTemplateName can be specified")
	case id != "":
		if !launchTemplateIDPattern.MatchString(id) {
			return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateIDMalformed,
				"The specified ID for the launch template (%s) is not valid. Launch template IDs must be in the format lt-xxxxxxxxxxxxxxxxx.", id)
		}
		if lt := s.visibleTemplateLocked(id, ""); lt != nil {
			return lt, nil
		}
		return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateIDNotFound,
			"The specified launch template, with template ID %s, does not exist.", id)
	case name != "":
		if lt := s.visibleTemplateLocked("", name); lt != nil {
			return lt, nil
		}
		return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateNameNotFound,
			"The specified launch template, with template name %s, does not exist.", name)
	}
	return nil, missingParameter("LaunchTemplateId or LaunchTemplateName")
}

// checkVersion accepts the versions the single-version template has.
func checkVersion(lt *LaunchTemplate, v string) error {
	switch v {
	case "", "$Latest", "$Default", "1":
		return nil
	}
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return invalidParameter("Invalid launch template version: %s. Specify a version number, $Latest, or $Default.", v)
	}
	return newError(http.StatusBadRequest, CodeInvalidLaunchTemplateIDVersionNotFound,
		"Could not find launch template version %s for launch template %s.", v, lt.ID)
}

// templateData reads LaunchTemplateData.* of a CreateLaunchTemplate.
func templateData(f form) (LaunchTemplateData, error) {
	const p = "LaunchTemplateData"
	d := LaunchTemplateData{
		ImageID: f.get(p + ".ImageId"), InstanceType: f.get(p + ".InstanceType"), UserData: f.get(p + ".UserData"),
		IamInstanceProfileName: f.get(p + ".IamInstanceProfile.Name"), IamInstanceProfileArn: f.get(p + ".IamInstanceProfile.Arn"),
		SecurityGroupIDs: f.strings(p + ".SecurityGroupId"), SecurityGroupNames: f.strings(p + ".SecurityGroup"),
	}
	monitoring, err := boolParam(f, p+".Monitoring.Enabled")
	if err != nil {
		return d, err
	}
	d.DetailedMonitoring = monitoring != nil && *monitoring
	for _, read := range []func(form, string, *LaunchTemplateData) error{
		networkInterfaces, blockDevices, capacityReservation, metadataOptions, cpuOptions, enclaveOptions, placement, tagSpecifications,
	} {
		if err := read(f, p, &d); err != nil {
			return d, err
		}
	}
	return d, nil
}

// networkInterfaces reads the interfaces' count and security groups (which
// exclude instance-level ones) and device 0's settings.
func networkInterfaces(f form, p string, d *LaunchTemplateData) error {
	nis := f.indices(p + ".NetworkInterface")
	d.NetworkInterfaces = len(nis)
	var niGroups []string
	for _, i := range nis {
		for _, g := range f.strings(at(p+".NetworkInterface", i) + ".SecurityGroupId") {
			if !slices.Contains(niGroups, g) { // each interface names the groups again
				niGroups = append(niGroups, g)
			}
		}
	}
	if err := primaryInterface(f, p+".NetworkInterface", nis, d); err != nil {
		return err
	}
	if err := templateInterfaces(f, p+".NetworkInterface", nis, d); err != nil {
		return err
	}
	if len(niGroups) > 0 {
		if len(d.SecurityGroupIDs) > 0 {
			return newError(http.StatusBadRequest, "InvalidParameterCombination",
				"Network interfaces and an instance-level security groups may not be specified on the same request")
		}
		d.SecurityGroupIDs = niGroups
	}
	return nil
}

// blockDevices reads the EBS block device mappings.
func blockDevices(f form, p string, d *LaunchTemplateData) error {
	for _, i := range f.indices(p + ".BlockDeviceMapping") {
		bp := at(p+".BlockDeviceMapping", i)
		b := BlockDevice{DeviceName: f.get(bp + ".DeviceName"), VolumeType: f.get(bp + ".Ebs.VolumeType"),
			KMSKeyID: f.get(bp + ".Ebs.KmsKeyId"), SnapshotID: f.get(bp + ".Ebs.SnapshotId")}
		if b.DeviceName == "" {
			return missingParameter(bp + ".DeviceName")
		}
		var err error
		if b.VolumeSize, err = int64Param(f, bp+".Ebs.VolumeSize"); err != nil {
			return err
		}
		if b.IOPS, err = int64Param(f, bp+".Ebs.Iops"); err != nil {
			return err
		}
		if b.Throughput, err = int64Param(f, bp+".Ebs.Throughput"); err != nil {
			return err
		}
		if b.Encrypted, err = boolParam(f, bp+".Ebs.Encrypted"); err != nil {
			return err
		}
		if b.DeleteOnTermination, err = boolParam(f, bp+".Ebs.DeleteOnTermination"); err != nil {
			return err
		}
		if b.InitializationRate, err = initializationRate(f, bp+".Ebs", b.SnapshotID); err != nil {
			return err
		}
		d.BlockDevices = append(d.BlockDevices, b)
	}
	return nil
}

// capacityReservation reads and checks the reservation preference and target.
func capacityReservation(f form, p string, d *LaunchTemplateData) error {
	cp := p + ".CapacityReservationSpecification"
	d.CapacityReservationPreference = f.get(cp + ".CapacityReservationPreference")
	d.CapacityReservationID = f.get(cp + ".CapacityReservationTarget.CapacityReservationId")
	switch d.CapacityReservationPreference {
	case "", PreferenceCapacityReservationsOnly, PreferenceOpen, PreferenceNone:
	default:
		return invalidParameter("Value (%s) for parameter capacityReservationPreference is invalid. Valid values: capacity-reservations-only, open, none",
			d.CapacityReservationPreference)
	}
	if d.CapacityReservationID != "" && !capacityReservationIDPattern(d.CapacityReservationID) {
		return newError(http.StatusBadRequest, CodeInvalidCapacityReservationIDMalformed, "Invalid id: \"%s\"", d.CapacityReservationID)
	}
	if d.CapacityReservationPreference == PreferenceCapacityReservationsOnly && d.CapacityReservationID == "" {
		return invalidParameter("A capacity reservation target is required with the capacity-reservations-only preference.")
	}
	switch d.MarketType = f.get(p + ".InstanceMarketOptions.MarketType"); d.MarketType {
	case "", LifecycleCapacityBlock, LifecycleInterruptible:
	case "spot":
		return newError(http.StatusBadRequest, CodeUnsupported, "The local EC2 endpoint does not launch spot through a launch template's InstanceMarketOptions")
	default:
		return invalidParameter("Value (%s) for parameter marketType is invalid. Valid values: spot, capacity-block, interruptible-capacity-reservation", d.MarketType)
	}
	return nil
}

// metadataOptions reads and checks the instance metadata options, if any.
func metadataOptions(f form, p string, d *LaunchTemplateData) error {
	mp := p + ".MetadataOptions"
	if !hasPrefix(f, mp+".") {
		return nil
	}
	m := &MetadataOptions{HTTPEndpoint: f.get(mp + ".HttpEndpoint"), HTTPProtocolIPv6: f.get(mp + ".HttpProtocolIpv6"),
		HTTPTokens: f.get(mp + ".HttpTokens"), InstanceMetadataTags: f.get(mp + ".InstanceMetadataTags")}
	var err error
	if m.HTTPPutResponseHopLimit, err = int64Param(f, mp+".HttpPutResponseHopLimit"); err != nil {
		return err
	}
	if err := m.validate(); err != nil {
		return err
	}
	d.MetadataOptions = m
	return nil
}

// tagSpecifications reads the tags per taggable resource type.
func tagSpecifications(f form, p string, d *LaunchTemplateData) error {
	for _, i := range f.indices(p + ".TagSpecification") {
		tp := at(p+".TagSpecification", i)
		rt := f.get(tp + ".ResourceType")
		switch rt {
		case "instance", "volume", "network-interface", "spot-instances-request", "elastic-gpu":
		default:
			return invalidParameter("'%s' is not a valid taggable resource type for this operation.", rt)
		}
		tags := f.tags(tp + ".Tag")
		if err := checkTagKeys(tags); err != nil {
			return err
		}
		if d.TagSpecifications == nil {
			d.TagSpecifications = map[string]map[string]string{}
		}
		d.TagSpecifications[rt] = tags
	}
	return nil
}

// primaryInterface reads device 0's public IP choice, prefix counts and
// connection tracking timeouts, refusing timeouts outside EC2's ranges.
func primaryInterface(f form, prefix string, nis []int, d *LaunchTemplateData) error {
	for _, i := range nis {
		np := at(prefix, i)
		if card := f.get(np + ".NetworkCardIndex"); f.get(np+".DeviceIndex") != "0" || (card != "" && card != "0") {
			continue
		}
		pub, err := boolParam(f, np+".AssociatePublicIpAddress")
		if err != nil {
			return err
		}
		d.AssociatePublicIPAddress = pub
		if d.IPv4PrefixCount, err = countParam(f, np+".Ipv4PrefixCount"); err != nil {
			return err
		}
		if d.IPv6PrefixCount, err = countParam(f, np+".Ipv6PrefixCount"); err != nil {
			return err
		}
		cp := np + ".ConnectionTrackingSpecification"
		if !hasPrefix(f, cp+".") {
			return nil
		}
		var ct ConnectionTracking
		for _, t := range []struct {
			name     string
			to       *int64
			min, max int64
		}{{"TcpEstablishedTimeout", &ct.TCPEstablished, 60, 432000}, {"UdpStreamTimeout", &ct.UDPStream, 60, 180}, {"UdpTimeout", &ct.UDP, 30, 60}} {
			key := cp + "." + t.name
			v, err := int64Param(f, key)
			if err != nil {
				return err
			}
			if f.get(key) != "" && (v < t.min || v > t.max) {
				return invalidParameter("Value (%d) for parameter %s is invalid. Valid values are between %d and %d.", v, t.name, t.min, t.max)
			}
			*t.to = v
		}
		d.ConnectionTracking = &ct
	}
	return nil
}

// initializationRate reads an EBS volume's initialization rate: 100-300
// MiB/s, for a volume made from a snapshot only.
func initializationRate(f form, ebs, snapshot string) (int64, error) {
	key := ebs + ".VolumeInitializationRate"
	v, err := int64Param(f, key)
	switch {
	case err != nil || f.get(key) == "":
		return 0, err
	case v < 100 || v > 300:
		return 0, invalidParameter("Value (%d) for parameter VolumeInitializationRate is invalid. Valid values are between 100 and 300.", v)
	case snapshot == "":
		return 0, newError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter VolumeInitializationRate is only supported for volumes created from snapshots.")
	}
	return v, nil
}

func (m *MetadataOptions) validate() error {
	for _, v := range []struct{ name, value string }{{"HttpEndpoint", m.HTTPEndpoint}, {"HttpProtocolIpv6", m.HTTPProtocolIPv6},
		{"InstanceMetadataTags", m.InstanceMetadataTags}} {
		if v.value != "" && v.value != "enabled" && v.value != "disabled" {
			return invalidParameter("Value (%s) for parameter %s is invalid. Valid values are enabled and disabled.", v.value, v.name)
		}
	}
	if m.HTTPTokens != "" && m.HTTPTokens != "optional" && m.HTTPTokens != "required" {
		return invalidParameter("Value (%s) for parameter HttpTokens is invalid. Valid values are optional and required.", m.HTTPTokens)
	}
	if m.HTTPPutResponseHopLimit != 0 && (m.HTTPPutResponseHopLimit < 1 || m.HTTPPutResponseHopLimit > 64) {
		return invalidParameter("Value (%d) for parameter HttpPutResponseHopLimit is invalid. Valid values are between 1 and 64.", m.HTTPPutResponseHopLimit)
	}
	return nil
}

func hasPrefix(f form, prefix string) bool {
	for k := range f {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func int64Param(f form, key string) (int64, error) {
	v := f.get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, invalidParameter("Invalid value '%s' for %s", v, key)
	}
	return n, nil
}

// countParam reads a count that may be left out (nil); a negative one is
// refused.
func countParam(f form, key string) (*int64, error) {
	if f.get(key) == "" {
		return nil, nil
	}
	v, err := int64Param(f, key)
	if err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, invalidParameter("Value (%d) for parameter %s is invalid. It must be a non-negative number.", v, key[strings.LastIndexByte(key, '.')+1:])
	}
	return &v, nil
}

func boolParam(f form, key string) (*bool, error) {
	switch f.get(key) {
	case "":
		return nil, nil
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	}
	return nil, invalidParameter("Invalid value '%s' for %s", f.get(key), key)
}

func (s *Server) createLaunchTemplate(f form) (withRequestID, error) {
	name := f.get("LaunchTemplateName")
	if name == "" {
		return nil, missingParameter("LaunchTemplateName")
	}
	if !hasPrefix(f, "LaunchTemplateData.") {
		return nil, missingParameter("LaunchTemplateData")
	}
	data, err := templateData(f)
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, i := range f.indices("TagSpecification") {
		p := at("TagSpecification", i)
		if rt := f.get(p + ".ResourceType"); rt != "launch-template" {
			return nil, invalidParameter("'%s' is not a valid taggable resource type for this operation.", rt)
		}
		maps.Copy(tags, f.tags(p+".Tag"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lt, err := s.createTemplateLocked(name, data, tags)
	if err != nil {
		return nil, err
	}
	lt.visibleAt = s.visibleAfter(lt.ID)
	return &launchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

var templateFields = fields[*LaunchTemplate]{
	"launch-template-name": func(lt *LaunchTemplate) []string { return []string{lt.Name} },
	"launch-template-id":   func(lt *LaunchTemplate) []string { return []string{lt.ID} },
	"create-time":          func(lt *LaunchTemplate) []string { return []string{ec2Time(lt.CreateTime)} },
}

func (s *Server) describeLaunchTemplates(f form) (withRequestID, error) {
	ids, names := f.strings("LaunchTemplateId"), f.strings("LaunchTemplateName")
	max, hasMax, err := f.intParam("MaxResults")
	if err != nil {
		return nil, err
	}
	if hasMax && (len(ids) > 0 || len(names) > 0) {
		return nil, newError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter launchTemplateIds or launchTemplateNames cannot be used with the parameter maxResults")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.visibleTemplatesLocked(s.sortedTemplatesLocked())
	if len(ids) > 0 || len(names) > 0 {
		items = nil
		seen := map[*LaunchTemplate]bool{}
		for _, id := range ids {
			lt, err := s.resolveTemplateLocked(id, "")
			if err != nil {
				return nil, err
			}
			if !seen[lt] {
				seen[lt] = true
				items = append(items, lt)
			}
		}
		for _, name := range names {
			lt := s.visibleTemplateLocked("", name)
			if lt == nil {
				// EC2 answers this one code for any missing name in the list.
				return nil, newError(http.StatusBadRequest, CodeInvalidLaunchTemplateNameNotFound,
					"At least one of the launch templates specified in the request does not exist.")
			}
			if !seen[lt] {
				seen[lt] = true
				items = append(items, lt)
			}
		}
	}
	items, err = applyFilters(items, f.filters(), templateFields, func(lt *LaunchTemplate) map[string]string { return lt.Tags })
	if err != nil {
		return nil, err
	}
	items, next, err := page(items, func(lt *LaunchTemplate) uint64 { return lt.seq }, "launchtemplates", f.get("NextToken"), max, 0, 1, 200)
	if err != nil {
		return nil, err
	}
	out := &describeLaunchTemplatesResponse{NextToken: next}
	for _, lt := range items {
		out.LaunchTemplates = append(out.LaunchTemplates, s.templateXML(lt))
	}
	return out, nil
}

func (s *Server) deleteLaunchTemplate(f form) (withRequestID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lt, err := s.resolveTemplateLocked(f.get("LaunchTemplateId"), f.get("LaunchTemplateName"))
	if err != nil {
		return nil, err
	}
	delete(s.templates, lt.ID)
	return &launchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

func (s *Server) templateXML(lt *LaunchTemplate) launchTemplateXML {
	return launchTemplateXML{
		LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: ec2Time(lt.CreateTime),
		CreatedBy:            "arn:aws:iam::" + s.opts.AccountID + ":role/joinery",
		DefaultVersionNumber: 1, LatestVersionNumber: 1, Tags: tagSet(lt.Tags),
	}
}
