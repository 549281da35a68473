package ec2

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
)

// Namespace is the XML namespace of EC2 API version 2016-11-15.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// APIVersion is the only EC2 API version the endpoint speaks.
const APIVersion = "2016-11-15"

// meta is embedded in every response body.
type meta struct {
	RequestID string `xml:"requestId"`
}

func (m *meta) setRequestID(id string) { m.RequestID = id }

type withRequestID interface{ setRequestID(string) }

// writeResponse writes body as <{action}Response xmlns=...>.
func writeResponse(w http.ResponseWriter, action, requestID string, body withRequestID) {
	body.setRequestID(requestID)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	start := xml.StartElement{
		Name: xml.Name{Local: action + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: Namespace}},
	}
	if err := xml.NewEncoder(&buf).EncodeElement(body, start); err != nil {
		writeError(w, requestID, newError(http.StatusInternalServerError, "InternalError", "encoding response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("x-amzn-RequestId", requestID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

type errorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []errorXML `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

type errorXML struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// writeError writes an EC2 error document with the error's HTTP status.
func writeError(w http.ResponseWriter, requestID string, e *apiError) {
	if aw, ok := w.(*answerWriter); ok {
		aw.code = e.Code
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	_ = xml.NewEncoder(&buf).Encode(errorResponse{
		Errors:    []errorXML{{Code: e.Code, Message: e.Message}},
		RequestID: requestID,
	})
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("x-amzn-RequestId", requestID)
	w.WriteHeader(e.Status)
	_, _ = w.Write(buf.Bytes())
}

type tagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// tagSet renders tags sorted by key so responses are deterministic.
func tagSet(tags map[string]string) []tagXML {
	out := make([]tagXML, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, tagXML{Key: k, Value: tags[k]})
	}
	return out
}

type stateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

// Instance state names and their EC2 state codes.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
)

var stateCodes = map[string]int{StatePending: 0, StateRunning: 16, StateShuttingDown: 32, StateTerminated: 48}

func state(name string) stateXML { return stateXML{Code: stateCodes[name], Name: name} }

// ---- CreateFleet ----

type createFleetResponse struct {
	meta
	FleetID   string             `xml:"fleetId"`
	Errors    []fleetErrorXML    `xml:"errorSet>item"`
	Instances []fleetInstanceXML `xml:"fleetInstanceSet>item"`
}

type fleetErrorXML struct {
	LaunchTemplateAndOverrides launchTemplateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                        `xml:"lifecycle"`
	ErrorCode                  string                        `xml:"errorCode"`
	ErrorMessage               string                        `xml:"errorMessage"`
}

type fleetInstanceXML struct {
	LaunchTemplateAndOverrides launchTemplateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                        `xml:"lifecycle"`
	InstanceIDs                []string                      `xml:"instanceIds>item"`
	InstanceType               string                        `xml:"instanceType"`
	SubnetID                   string                        `xml:"subnetId,omitempty"`
	AvailabilityZone           string                        `xml:"availabilityZone,omitempty"`
	Platform                   string                        `xml:"platform,omitempty"`
}

type launchTemplateAndOverridesXML struct {
	LaunchTemplateSpecification launchTemplateSpecXML `xml:"launchTemplateSpecification"`
	Overrides                   overridesXML          `xml:"overrides"`
}

type launchTemplateSpecXML struct {
	LaunchTemplateID   string `xml:"launchTemplateId,omitempty"`
	LaunchTemplateName string `xml:"launchTemplateName,omitempty"`
	Version            string `xml:"version,omitempty"`
}

type overridesXML struct {
	InstanceType     string `xml:"instanceType,omitempty"`
	ImageID          string `xml:"imageId,omitempty"`
	SubnetID         string `xml:"subnetId,omitempty"`
	AvailabilityZone string `xml:"availabilityZone,omitempty"`
	MaxPrice         string `xml:"maxPrice,omitempty"`
	Priority         string `xml:"priority,omitempty"`
	WeightedCapacity string `xml:"weightedCapacity,omitempty"`
}

// ---- DescribeInstances / TerminateInstances / CreateTags ----

type describeInstancesResponse struct {
	meta
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	RequesterID   string        `xml:"requesterId,omitempty"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type groupXML struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type placementXML struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId,omitempty"`
	GroupName          string `xml:"groupName,omitempty"`
	GroupID            string `xml:"groupId,omitempty"`
	PartitionNumber    int    `xml:"partitionNumber,omitempty"`
	Tenancy            string `xml:"tenancy"`
}

type stateReasonXML struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

type instanceXML struct {
	InstanceID            string                        `xml:"instanceId"`
	ImageID               string                        `xml:"imageId"`
	InstanceState         stateXML                      `xml:"instanceState"`
	PrivateDNSName        string                        `xml:"privateDnsName"`
	DNSName               string                        `xml:"dnsName"`
	Reason                string                        `xml:"reason"`
	AmiLaunchIndex        int                           `xml:"amiLaunchIndex"`
	InstanceType          string                        `xml:"instanceType"`
	LaunchTime            string                        `xml:"launchTime"`
	Placement             placementXML                  `xml:"placement"`
	SubnetID              string                        `xml:"subnetId,omitempty"`
	VpcID                 string                        `xml:"vpcId,omitempty"`
	PrivateIPAddress      string                        `xml:"privateIpAddress,omitempty"`
	IPAddress             string                        `xml:"ipAddress,omitempty"`
	Monitoring            monitoringXML                 `xml:"monitoring"`
	CPUOptions            *cpuOptionsXML                `xml:"cpuOptions,omitempty"`
	EnclaveOptions        enclaveOptionsXML             `xml:"enclaveOptions"`
	Groups                []groupXML                    `xml:"groupSet>item"`
	IamInstanceProfile    *iamInstanceProfileXML        `xml:"iamInstanceProfile,omitempty"`
	MetadataOptions       *instanceMetadataOptionsXML   `xml:"metadataOptions,omitempty"`
	BlockDevices          []instanceBlockDeviceXML      `xml:"blockDeviceMapping>item"`
	StateReason           *stateReasonXML               `xml:"stateReason,omitempty"`
	Architecture          string                        `xml:"architecture"`
	RootDeviceType        string                        `xml:"rootDeviceType"`
	RootDeviceName        string                        `xml:"rootDeviceName"`
	InstanceLifecycle     string                        `xml:"instanceLifecycle,omitempty"`
	CapacityReservationID string                        `xml:"capacityReservationId,omitempty"`
	ReservationSpec       reservationSpecXML            `xml:"capacityReservationSpecification"`
	SpotInstanceRequestID string                        `xml:"spotInstanceRequestId,omitempty"`
	ClientToken           string                        `xml:"clientToken,omitempty"`
	Tags                  []tagXML                      `xml:"tagSet>item"`
	VirtualizationType    string                        `xml:"virtualizationType"`
	Hypervisor            string                        `xml:"hypervisor"`
	NetworkInterfaces     []instanceNetworkInterfaceXML `xml:"networkInterfaceSet>item"`
}

// reservationSpecXML is an instance's capacityReservationSpecification:
// the preference it was launched with and, when targeted, the reservation.
type reservationSpecXML struct {
	Preference string                `xml:"capacityReservationPreference"`
	Target     *reservationTargetXML `xml:"capacityReservationTarget,omitempty"`
}

type reservationTargetXML struct {
	CapacityReservationID string `xml:"capacityReservationId"`
}

// instanceNetworkInterfaceXML is an instance's network interface as
// DescribeInstances shows it: the primary one, with its delegated prefixes.
type instanceNetworkInterfaceXML struct {
	NetworkInterfaceID string                `xml:"networkInterfaceId"`
	SubnetID           string                `xml:"subnetId"`
	VpcID              string                `xml:"vpcId"`
	OwnerID            string                `xml:"ownerId"`
	Status             string                `xml:"status"`
	PrivateIPAddress   string                `xml:"privateIpAddress"`
	PrivateDNSName     string                `xml:"privateDnsName"`
	InterfaceType      string                `xml:"interfaceType"`
	Attachment         niAttachmentXML       `xml:"attachment"`
	Groups             []groupXML            `xml:"groupSet>item"`
	IPv4Prefixes       []ipv4PrefixXML       `xml:"ipv4PrefixSet>item"`
	PrivateIPs         []niPrivateAddressXML `xml:"privateIpAddressesSet>item"`
}

type niAttachmentXML struct {
	AttachmentID        string `xml:"attachmentId"`
	DeviceIndex         int    `xml:"deviceIndex"`
	NetworkCardIndex    int    `xml:"networkCardIndex"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type ipv4PrefixXML struct {
	IPv4Prefix string `xml:"ipv4Prefix"`
}

type niPrivateAddressXML struct {
	PrivateIPAddress string `xml:"privateIpAddress"`
	PrivateDNSName   string `xml:"privateDnsName"`
	Primary          bool   `xml:"primary"`
}

type monitoringXML struct {
	State string `xml:"state"`
}

// cpuOptionsXML is an instance's CpuOptions: only what its launch template
// set (the catalog holds no core counts to report).
type cpuOptionsXML struct {
	NestedVirtualization string `xml:"nestedVirtualization,omitempty"`
}

type terminateInstancesResponse struct {
	meta
	Instances []stateChangeXML `xml:"instancesSet>item"`
}

type stateChangeXML struct {
	InstanceID    string   `xml:"instanceId"`
	CurrentState  stateXML `xml:"currentState"`
	PreviousState stateXML `xml:"previousState"`
}

type returnResponse struct {
	meta
	Return bool `xml:"return"`
}

// ---- DescribeInstanceTypes / DescribeInstanceTypeOfferings ----

type describeInstanceTypesResponse struct {
	meta
	InstanceTypes []instanceTypeXML `xml:"instanceTypeSet>item"`
	NextToken     string            `xml:"nextToken,omitempty"`
}

type instanceTypeXML struct {
	InstanceType                 string                  `xml:"instanceType"`
	SupportedUsageClasses        []string                `xml:"supportedUsageClasses>item"`
	SupportedRootDeviceTypes     []string                `xml:"supportedRootDeviceTypes>item"`
	SupportedVirtualizationTypes []string                `xml:"supportedVirtualizationTypes>item"`
	BareMetal                    bool                    `xml:"bareMetal"`
	Hypervisor                   string                  `xml:"hypervisor,omitempty"`
	NitroEnclavesSupport         string                  `xml:"nitroEnclavesSupport"`
	ProcessorInfo                processorInfoXML        `xml:"processorInfo"`
	VCpuInfo                     vcpuInfoXML             `xml:"vCpuInfo"`
	MemoryInfo                   memoryInfoXML           `xml:"memoryInfo"`
	InstanceStorageSupported     bool                    `xml:"instanceStorageSupported"`
	InstanceStorageInfo          *instanceStorageInfoXML `xml:"instanceStorageInfo,omitempty"`
	EbsInfo                      *ebsInfoXML             `xml:"ebsInfo,omitempty"`
	NetworkInfo                  networkInfoXML          `xml:"networkInfo"`
	GpuInfo                      *gpuInfoXML             `xml:"gpuInfo,omitempty"`
	NeuronInfo                   *neuronInfoXML          `xml:"neuronInfo,omitempty"`
	InferenceAcceleratorInfo     *inferenceInfoXML       `xml:"inferenceAcceleratorInfo,omitempty"`
	SupportedBootModes           []string                `xml:"supportedBootModes>item"`
	PlacementGroupInfo           placementGroupInfoXML   `xml:"placementGroupInfo"`
}

type placementGroupInfoXML struct {
	SupportedStrategies []string `xml:"supportedStrategies>item"`
}

type processorInfoXML struct {
	SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	Manufacturer           string   `xml:"manufacturer,omitempty"`
	SupportedFeatures      []string `xml:"supportedFeatures>item,omitempty"`
}

type vcpuInfoXML struct {
	DefaultVCpus int `xml:"defaultVCpus"`
}

type memoryInfoXML struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type instanceStorageInfoXML struct {
	TotalSizeInGB int64  `xml:"totalSizeInGB"`
	NvmeSupport   string `xml:"nvmeSupport"`
}

type ebsInfoXML struct {
	EbsOptimizedSupport   string               `xml:"ebsOptimizedSupport"`
	EbsOptimizedInfo      *ebsOptimizedInfoXML `xml:"ebsOptimizedInfo,omitempty"`
	MaximumEbsAttachments int                  `xml:"maximumEbsAttachments,omitempty"`
	AttachmentLimitType   string               `xml:"attachmentLimitType,omitempty"`
}

type ebsOptimizedInfoXML struct {
	MaximumBandwidthInMbps int64 `xml:"maximumBandwidthInMbps"`
}

type networkInfoXML struct {
	NetworkPerformance        string           `xml:"networkPerformance,omitempty"`
	MaximumNetworkInterfaces  int              `xml:"maximumNetworkInterfaces,omitempty"`
	MaximumNetworkCards       int              `xml:"maximumNetworkCards,omitempty"`
	DefaultNetworkCardIndex   *int             `xml:"defaultNetworkCardIndex,omitempty"`
	NetworkCards              []networkCardXML `xml:"networkCards>item"`
	Ipv4AddressesPerInterface int              `xml:"ipv4AddressesPerInterface,omitempty"`
	EfaSupported              bool             `xml:"efaSupported"`
	EfaInfo                   *efaInfoXML      `xml:"efaInfo,omitempty"`
}

type networkCardXML struct {
	NetworkCardIndex         int     `xml:"networkCardIndex"`
	NetworkPerformance       string  `xml:"networkPerformance,omitempty"`
	MaximumNetworkInterfaces int     `xml:"maximumNetworkInterfaces,omitempty"`
	BaselineBandwidthInGbps  float64 `xml:"baselineBandwidthInGbps,omitempty"`
}

type inferenceInfoXML struct {
	Accelerators []inferenceDeviceXML `xml:"accelerators>member"`
}

type inferenceDeviceXML struct {
	Count        int    `xml:"count"`
	Name         string `xml:"name"`
	Manufacturer string `xml:"manufacturer"`
}

type efaInfoXML struct {
	MaximumEfaInterfaces int `xml:"maximumEfaInterfaces"`
}

type gpuInfoXML struct {
	Gpus                []gpuDeviceXML `xml:"gpus>item"`
	TotalGpuMemoryInMiB int64          `xml:"totalGpuMemoryInMiB"`
}

type gpuDeviceXML struct {
	Name         string        `xml:"name"`
	Manufacturer string        `xml:"manufacturer"`
	Count        int           `xml:"count"`
	MemoryInfo   memoryInfoXML `xml:"memoryInfo"`
}

type neuronInfoXML struct {
	NeuronDevices []neuronDeviceXML `xml:"neuronDevices>item"`
}

type neuronDeviceXML struct {
	Count int    `xml:"count"`
	Name  string `xml:"name"`
}

type describeInstanceTypeOfferingsResponse struct {
	meta
	Offerings []instanceTypeOfferingXML `xml:"instanceTypeOfferingSet>item"`
	NextToken string                    `xml:"nextToken,omitempty"`
}

type instanceTypeOfferingXML struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

// ---- DescribeSubnets / DescribeSecurityGroups ----

type describeSubnetsResponse struct {
	meta
	Subnets   []subnetXML `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

type subnetXML struct {
	SubnetID                string   `xml:"subnetId"`
	SubnetArn               string   `xml:"subnetArn"`
	State                   string   `xml:"state"`
	VpcID                   string   `xml:"vpcId"`
	OwnerID                 string   `xml:"ownerId"`
	CidrBlock               string   `xml:"cidrBlock"`
	AvailableIPAddressCount int      `xml:"availableIpAddressCount"`
	AvailabilityZone        string   `xml:"availabilityZone"`
	AvailabilityZoneID      string   `xml:"availabilityZoneId"`
	DefaultForAz            bool     `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool     `xml:"mapPublicIpOnLaunch"`
	Tags                    []tagXML `xml:"tagSet>item"`
}

type describeSecurityGroupsResponse struct {
	meta
	Groups    []securityGroupXML `xml:"securityGroupInfo>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

type securityGroupXML struct {
	OwnerID          string   `xml:"ownerId"`
	GroupID          string   `xml:"groupId"`
	GroupName        string   `xml:"groupName"`
	GroupDescription string   `xml:"groupDescription"`
	VpcID            string   `xml:"vpcId"`
	SecurityGroupArn string   `xml:"securityGroupArn"`
	Tags             []tagXML `xml:"tagSet>item"`
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// ---- DescribeImages ----

type describeImagesResponse struct {
	meta
	Images    []imageXML `xml:"imagesSet>item"`
	NextToken string     `xml:"nextToken,omitempty"`
}

type imageXML struct {
	ImageID            string                `xml:"imageId"`
	ImageLocation      string                `xml:"imageLocation"`
	ImageState         string                `xml:"imageState"`
	ImageOwnerID       string                `xml:"imageOwnerId"`
	CreationDate       string                `xml:"creationDate"`
	IsPublic           bool                  `xml:"isPublic"`
	Architecture       string                `xml:"architecture"`
	ImageType          string                `xml:"imageType"`
	Name               string                `xml:"name"`
	Description        string                `xml:"description,omitempty"`
	ImageOwnerAlias    string                `xml:"imageOwnerAlias,omitempty"`
	RootDeviceType     string                `xml:"rootDeviceType"`
	RootDeviceName     string                `xml:"rootDeviceName"`
	BlockDevices       []imageBlockDeviceXML `xml:"blockDeviceMapping>item"`
	VirtualizationType string                `xml:"virtualizationType"`
	Hypervisor         string                `xml:"hypervisor"`
	EnaSupport         bool                  `xml:"enaSupport"`
	BootMode           string                `xml:"bootMode,omitempty"`
	ImdsSupport        string                `xml:"imdsSupport,omitempty"`
	Platform           string                `xml:"platform,omitempty"`
	PlatformDetails    string                `xml:"platformDetails"`
	UsageOperation     string                `xml:"usageOperation"`
	DeprecationTime    string                `xml:"deprecationTime,omitempty"`
	Tags               []tagXML              `xml:"tagSet>item"`
}

type imageBlockDeviceXML struct {
	DeviceName string      `xml:"deviceName"`
	EBS        imageEBSXML `xml:"ebs"`
}

type imageEBSXML struct {
	SnapshotID          string `xml:"snapshotId"`
	VolumeSize          int64  `xml:"volumeSize"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
	VolumeType          string `xml:"volumeType"`
	Encrypted           bool   `xml:"encrypted"`
}

// ---- Launch templates ----

type launchTemplateResponse struct {
	meta
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

type describeLaunchTemplatesResponse struct {
	meta
	LaunchTemplates []launchTemplateXML `xml:"launchTemplates>item"`
	NextToken       string              `xml:"nextToken,omitempty"`
}

type launchTemplateXML struct {
	LaunchTemplateID     string   `xml:"launchTemplateId"`
	LaunchTemplateName   string   `xml:"launchTemplateName"`
	CreateTime           string   `xml:"createTime"`
	CreatedBy            string   `xml:"createdBy"`
	DefaultVersionNumber int64    `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64    `xml:"latestVersionNumber"`
	Tags                 []tagXML `xml:"tagSet>item"`
}

// ---- Instance parts recorded from the launch template ----

type iamInstanceProfileXML struct {
	Arn string `xml:"arn"`
	ID  string `xml:"id"`
}

type instanceMetadataOptionsXML struct {
	State                   string `xml:"state"`
	HTTPTokens              string `xml:"httpTokens"`
	HTTPPutResponseHopLimit int64  `xml:"httpPutResponseHopLimit"`
	HTTPEndpoint            string `xml:"httpEndpoint"`
	HTTPProtocolIPv6        string `xml:"httpProtocolIpv6"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags"`
}

type instanceBlockDeviceXML struct {
	DeviceName string               `xml:"deviceName"`
	EBS        instanceEBSDeviceXML `xml:"ebs"`
}

type instanceEBSDeviceXML struct {
	VolumeID            string `xml:"volumeId"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type describeInstanceAttributeResponse struct {
	meta
	InstanceID string             `xml:"instanceId"`
	UserData   *attributeValueXML `xml:"userData,omitempty"`
}

type attributeValueXML struct {
	Value string `xml:"value"`
}
