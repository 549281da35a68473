package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// LaunchTemplateData is what a launch template carries for the instances
// launched from it.
type LaunchTemplateData struct {
	ImageID string
	// UserData is base64, as EC2 takes it.
	UserData string
	// InstanceProfile is the IAM instance profile name.
	InstanceProfile  string
	SecurityGroupIDs []string
	BlockDevices     []apiv1.BlockDeviceMapping
	MetadataOptions  *apiv1.MetadataOptions
	// Tags go on the template and, through its tag specifications, on the
	// instances' network interfaces (Karpenter's set); the cluster tag is
	// added.
	Tags map[string]string
	// CapacityReservationID, when set, makes the template launch only into
	// that capacity reservation (CapacityReservationSpecification:
	// preference capacity-reservations-only, the reservation as target), as
	// Karpenter's reserved launch templates do. Omitted from the template
	// name's hash when empty, so other templates keep their names.
	CapacityReservationID string `json:",omitempty"`
	// MarketType is the template's InstanceMarketOptions.MarketType for a
	// reserved template as Karpenter sets it: "capacity-block" for a
	// capacity block, "interruptible-capacity-reservation" for an
	// interruptible reservation, "" otherwise (left out of the name's hash).
	MarketType string `json:",omitempty"`
	// NoCapacityReservations keeps the template's on-demand launches out of
	// open capacity reservations (preference none), as Karpenter's
	// on-demand and spot templates are with reserved capacity on, so they
	// do not use up reservations a class counts on. Omitted when false.
	NoCapacityReservations bool `json:",omitempty"`
	// DetailedMonitoring (spec.detailedMonitoring): CloudWatch detailed
	// monitoring of the instances. The template says Monitoring.Enabled
	// either way, as Karpenter's does.
	DetailedMonitoring bool `json:",omitempty"`
	// AssociatePublicIPAddress (spec.associatePublicIPAddress) and
	// ConnectionTracking (spec.connectionTracking) go on the primary
	// network interface; nil: the subnet's setting, EC2's timeouts.
	AssociatePublicIPAddress *bool                     `json:",omitempty"`
	ConnectionTracking       *apiv1.ConnectionTracking `json:",omitempty"`
	// NestedVirtualization (spec.cpuOptions.nestedVirtualization,
	// "enabled" or "disabled") is the template's CpuOptions, sent only when
	// set, as Karpenter's are; omitted from the name's hash when "".
	NestedVirtualization string `json:",omitempty"`
	// EnclavesEnabled (spec.enclaveOptions.enabled) is the template's
	// EnclaveOptions.Enabled, sent true or false on every template as
	// Karpenter's are; omitted from the name's hash when false, so other
	// templates keep their names.
	EnclavesEnabled bool `json:",omitempty"`
	// IPv4PrefixCount / IPv6PrefixCount (spec.ipPrefixCount, by the
	// cluster's IP family as Karpenter picks): prefixes EC2 assigns the
	// primary interface at launch; nil leaves them out (and the template
	// name as before).
	IPv4PrefixCount *int32 `json:",omitempty"`
	IPv6PrefixCount *int32 `json:",omitempty"`
	// NetworkInterfaces (spec.networkInterfaces) replace the one primary
	// interface; EFAInterfaces, when they are unset, asks for that many
	// EFA interfaces (a NodeClaim requesting vpc.amazonaws.com/efa), as
	// Karpenter builds them (templateInterfaces). Both omitted from the
	// name's hash when unset.
	NetworkInterfaces []apiv1.NetworkInterface `json:",omitempty"`
	EFAInterfaces     int                      `json:",omitempty"`
	// PlacementGroupID (spec.placementGroupSelector, resolved) is the
	// template's Placement.GroupId, as Karpenter's templates name the
	// group; EC2 picks a partition group's partition. Omitted from the
	// name's hash when "".
	PlacementGroupID string `json:",omitempty"`
	// PartitionNumber is the partition of a partition group the NodeClaim
	// was given (its placement-group-partition requirement, as Karpenter
	// takes the lowest it allows); 0 lets EC2 pick.
	PartitionNumber int32 `json:",omitempty"`
}

// LaunchTemplate names one launch template.
type LaunchTemplate struct {
	ID, Name string
	Tags     map[string]string
	Created  time.Time
}

// EnsureLaunchTemplate returns the launch template called name, creating it
// from d when DescribeLaunchTemplates says it does not exist. A concurrent
// creator winning the race (AlreadyExists) is not an error: the template is
// described again, and if EC2 does not show it yet (eventual consistency)
// it is returned by name, created now as far as Joinery knows. An existing
// template is returned as it is: the name should be a hash of d.
func (c *Client) EnsureLaunchTemplate(ctx context.Context, name string, d LaunchTemplateData) (LaunchTemplate, error) {
	lt, err := c.describeLaunchTemplate(ctx, name)
	if err == nil || !isCode(err, "InvalidLaunchTemplateName.NotFoundException") {
		return lt, err
	}
	tags := maps.Clone(d.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[apiv1.TagCluster] = c.opts.ClusterName
	data, err := requestTemplateData(d, tags)
	if err != nil {
		return LaunchTemplate{}, fmt.Errorf("launch template %s: %w", name, err)
	}
	out, err := c.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name), LaunchTemplateData: data,
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeLaunchTemplate, Tags: ec2Tags(tags)}},
	})
	if isCode(err, "InvalidLaunchTemplateName.AlreadyExistsException") {
		lt, err := c.describeLaunchTemplate(ctx, name)
		if isCode(err, "InvalidLaunchTemplateName.NotFoundException") {
			return LaunchTemplate{Name: name, Tags: tags, Created: c.opts.Clock.Now()}, nil
		}
		return lt, err
	}
	if err != nil {
		return LaunchTemplate{}, fmt.Errorf("CreateLaunchTemplate %s: %w", name, err)
	}
	return fromEC2Template(*out.LaunchTemplate), nil
}

func (c *Client) describeLaunchTemplate(ctx context.Context, name string) (LaunchTemplate, error) {
	out, err := c.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err != nil {
		return LaunchTemplate{}, fmt.Errorf("DescribeLaunchTemplates %s: %w", name, err)
	}
	for _, lt := range out.LaunchTemplates {
		if aws.ToString(lt.LaunchTemplateName) == name {
			return fromEC2Template(lt), nil
		}
	}
	return LaunchTemplate{}, fmt.Errorf("DescribeLaunchTemplates %s: not in the answer", name)
}

// LaunchTemplates returns the launch templates tagged with this cluster
// (joinery.sh/cluster=<ClusterName>), following pagination.
func (c *Client) LaunchTemplates(ctx context.Context) ([]LaunchTemplate, error) {
	p := ec2.NewDescribeLaunchTemplatesPaginator(c.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters:    []types.Filter{{Name: aws.String("tag:" + apiv1.TagCluster), Values: []string{c.opts.ClusterName}}},
		MaxResults: aws.Int32(200),
	})
	var out []LaunchTemplate
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeLaunchTemplates: %w", err)
		}
		for _, lt := range page.LaunchTemplates {
			out = append(out, fromEC2Template(lt))
		}
	}
	return out, nil
}

// DeleteLaunchTemplate deletes the launch template with the given id; one
// that does not exist counts as deleted.
func (c *Client) DeleteLaunchTemplate(ctx context.Context, id string) error {
	_, err := c.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)})
	if err != nil && !isCode(err, "InvalidLaunchTemplateId.NotFound") {
		return fmt.Errorf("DeleteLaunchTemplate %s: %w", id, err)
	}
	return nil
}

func fromEC2Template(lt types.LaunchTemplate) LaunchTemplate {
	out := LaunchTemplate{ID: aws.ToString(lt.LaunchTemplateId), Name: aws.ToString(lt.LaunchTemplateName), Tags: map[string]string{},
		Created: aws.ToTime(lt.CreateTime)}
	for _, t := range lt.Tags {
		out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

func ec2Tags(tags map[string]string) []types.Tag {
	out := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// requestTemplateData is d as CreateLaunchTemplate takes it: the security
// groups, the public IP choice, the connection tracking timeouts and the
// prefix count on one network interface (device 0), as Karpenter does, and
// the tags on the interfaces the instances get.
func requestTemplateData(d LaunchTemplateData, tags map[string]string) (*types.RequestLaunchTemplateData, error) {
	if d.ImageID == "" {
		return nil, errors.New("ImageID is required")
	}
	out := &types.RequestLaunchTemplateData{ImageId: aws.String(d.ImageID)}
	if d.UserData != "" {
		out.UserData = aws.String(d.UserData)
	}
	if d.InstanceProfile != "" {
		out.IamInstanceProfile = &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(d.InstanceProfile)}
	}
	out.Monitoring = &types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(d.DetailedMonitoring)}
	out.EnclaveOptions = &types.LaunchTemplateEnclaveOptionsRequest{Enabled: aws.Bool(d.EnclavesEnabled)}
	if d.PlacementGroupID != "" {
		out.Placement = &types.LaunchTemplatePlacementRequest{GroupId: aws.String(d.PlacementGroupID)}
		if d.PartitionNumber > 0 {
			out.Placement.PartitionNumber = aws.Int32(d.PartitionNumber)
		}
	}
	if d.NestedVirtualization != "" {
		out.CpuOptions = &types.LaunchTemplateCpuOptionsRequest{NestedVirtualization: types.NestedVirtualizationSpecification(d.NestedVirtualization)}
	}
	out.NetworkInterfaces = templateInterfaces(d)
	for i, b := range d.BlockDevices {
		if b.DeviceName == "" {
			return nil, fmt.Errorf("blockDeviceMappings[%d].deviceName is required", i)
		}
		m := types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: aws.String(b.DeviceName)}
		if e := b.EBS; e != nil {
			ebs := &types.LaunchTemplateEbsBlockDeviceRequest{
				Encrypted: e.Encrypted, DeleteOnTermination: e.DeleteOnTermination, VolumeType: types.VolumeType(e.VolumeType),
			}
			if e.VolumeSize != nil {
				// EC2 takes GiB; round up so the volume is never smaller than asked.
				gib := (e.VolumeSize.Value() + (1<<30 - 1)) >> 30
				if gib < 1 || gib > 65536 {
					return nil, fmt.Errorf("blockDeviceMappings[%d].ebs.volumeSize %s is not between 1Gi and 64Ti", i, e.VolumeSize)
				}
				ebs.VolumeSize = aws.Int32(int32(gib))
			}
			if e.IOPS != nil {
				ebs.Iops = aws.Int32(int32(*e.IOPS))
			}
			if e.Throughput != nil {
				ebs.Throughput = aws.Int32(int32(*e.Throughput))
			}
			if e.KMSKeyID != "" {
				ebs.KmsKeyId = aws.String(e.KMSKeyID)
			}
			if e.SnapshotID != "" {
				ebs.SnapshotId = aws.String(e.SnapshotID)
			}
			ebs.VolumeInitializationRate = e.VolumeInitializationRate
			m.Ebs = ebs
		}
		out.BlockDeviceMappings = append(out.BlockDeviceMappings, m)
	}
	if m := d.MetadataOptions; m != nil {
		mo := &types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpEndpoint:         types.LaunchTemplateInstanceMetadataEndpointState(aws.ToString(m.HTTPEndpoint)),
			HttpProtocolIpv6:     types.LaunchTemplateInstanceMetadataProtocolIpv6(aws.ToString(m.HTTPProtocolIPv6)),
			HttpTokens:           types.LaunchTemplateHttpTokensState(aws.ToString(m.HTTPTokens)),
			InstanceMetadataTags: types.LaunchTemplateInstanceMetadataTagsStateDisabled,
		}
		if m.HTTPPutResponseHopLimit != nil {
			mo.HttpPutResponseHopLimit = aws.Int32(int32(*m.HTTPPutResponseHopLimit))
		}
		out.MetadataOptions = mo
	}
	if d.NoCapacityReservations && d.CapacityReservationID == "" {
		out.CapacityReservationSpecification = &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceNone,
		}
	}
	if d.CapacityReservationID != "" {
		out.CapacityReservationSpecification = &types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &types.CapacityReservationTarget{CapacityReservationId: aws.String(d.CapacityReservationID)},
		}
	}
	if d.MarketType != "" {
		out.InstanceMarketOptions = &types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: types.MarketType(d.MarketType)}
	}
	out.TagSpecifications = []types.LaunchTemplateTagSpecificationRequest{{ResourceType: types.ResourceTypeNetworkInterface, Tags: ec2Tags(tags)}}
	return out, nil
}

// connectionTracking is the interface's ConnectionTrackingSpecification
// (nil when the class sets no timeout).
func connectionTracking(ct *apiv1.ConnectionTracking) *types.ConnectionTrackingSpecificationRequest {
	if ct == nil || (ct.TCPEstablishedTimeout == nil && ct.UDPStreamTimeout == nil && ct.UDPTimeout == nil) {
		return nil
	}
	return &types.ConnectionTrackingSpecificationRequest{TcpEstablishedTimeout: ct.TCPEstablishedTimeout,
		UdpStreamTimeout: ct.UDPStreamTimeout, UdpTimeout: ct.UDPTimeout}
}

// isCode reports whether err carries the AWS error code.
func isCode(err error, code string) bool { return err != nil && errorCode(err) == code }
