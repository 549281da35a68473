package v1

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClass (karpenter.k8s.aws/v1) says how to launch an instance:
// subnets, security groups, AMI, block devices, kubelet settings. Fields
// Joinery does not act on yet are kept so Karpenter YAML decodes unchanged.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              EC2NodeClassSpec   `json:"spec,omitempty"`
	Status            EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassSpec is karpenter.k8s.aws/v1 EC2NodeClass.spec: every field
// of Karpenter v1.15, so any valid Karpenter YAML decodes strictly. The
// fields Joinery does not act on are refused, not ignored:
// nodeclass.Unsupported names them and a class that sets one does not
// launch.
type EC2NodeClassSpec struct {
	AMIFamily                  string                `json:"amiFamily,omitempty"`
	Role                       string                `json:"role,omitempty"`
	InstanceProfile            string                `json:"instanceProfile,omitempty"`
	SubnetSelectorTerms        []SelectorTerm        `json:"subnetSelectorTerms,omitempty"`
	SecurityGroupSelectorTerms []SelectorTerm        `json:"securityGroupSelectorTerms,omitempty"`
	AMISelectorTerms           []AMISelectorTerm     `json:"amiSelectorTerms,omitempty"`
	BlockDeviceMappings        []BlockDeviceMapping  `json:"blockDeviceMappings,omitempty"`
	MetadataOptions            *MetadataOptions      `json:"metadataOptions,omitempty"`
	UserData                   *string               `json:"userData,omitempty"`
	Tags                       map[string]string     `json:"tags,omitempty"`
	Kubelet                    *KubeletConfiguration `json:"kubelet,omitempty"`
	// InstanceStorePolicy RAID0: the instance store volumes, striped into
	// one RAID0 array, hold the kubelet's and containers' ephemeral storage
	// (the node's ephemeral-storage is their size, and user data says so).
	InstanceStorePolicy *string `json:"instanceStorePolicy,omitempty"`
	// CapacityReservationSelectorTerms select On-Demand Capacity
	// Reservations (terms ORed) whose instances the class's NodePools may
	// launch as capacity type "reserved" (ValidateCapacityReservationTerms).
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`

	// The launch template's and CreateFleet's own settings: detailed
	// monitoring; the primary interface's public IP choice and idle
	// connection tracking timeouts; CreateFleet's reserved Context; the
	// CPU options (nested virtualization); the Nitro Enclaves choice.
	AssociatePublicIPAddress *bool               `json:"associatePublicIPAddress,omitempty"`
	DetailedMonitoring       *bool               `json:"detailedMonitoring,omitempty"`
	ConnectionTracking       *ConnectionTracking `json:"connectionTracking,omitempty"`
	Context                  *string             `json:"context,omitempty"`
	CPUOptions               *CPUOptions         `json:"cpuOptions,omitempty"`
	EnclaveOptions           *EnclaveOptions     `json:"enclaveOptions,omitempty"`
	// IPPrefixCount is how many /28 prefixes (/80 in an IPv6 cluster) EC2
	// assigns the primary interface at launch (the launch template's
	// Ipv4PrefixCount), to pre-warm the VPC CNI's prefix delegation. As in
	// Karpenter it leaves the node's max pods as it is and is not part of
	// the class's drift hash.
	IPPrefixCount *int32 `json:"ipPrefixCount,omitempty"`

	// Karpenter v1.14 fields Joinery refuses (nodeclass.Unsupported).
	PlacementGroupSelector *PlacementGroupSelector `json:"placementGroupSelector,omitempty"`
	// NetworkInterfaces are the launch template's interfaces, as written
	// (ValidateNetworkInterfaces): they narrow the instance types to those
	// that have the cards and devices (catalog Unlaunchable), set the
	// vpc.amazonaws.com/efa capacity to the efa-only count and take the
	// default card's efa-only interfaces out of the pods' addresses.
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
}

// InstanceStorePolicyRAID0 is the one value of spec.instanceStorePolicy.
const InstanceStorePolicyRAID0 = "RAID0"

// RAID0 reports whether the class puts ephemeral storage on the instance
// store (spec.instanceStorePolicy: RAID0).
func (s *EC2NodeClassSpec) RAID0() bool {
	return s != nil && s.InstanceStorePolicy != nil && *s.InstanceStorePolicy == InstanceStorePolicyRAID0
}

// CapacityReservationSelectorTerm selects On-Demand Capacity Reservations
// by id, or by tags ("*" matches any value) and/or instanceMatchCriteria,
// optionally of one owner account (Karpenter v1.14).
type CapacityReservationSelectorTerm struct {
	Tags                  map[string]string `json:"tags,omitempty"`
	ID                    string            `json:"id,omitempty"`
	OwnerID               string            `json:"ownerID,omitempty"`
	InstanceMatchCriteria string            `json:"instanceMatchCriteria,omitempty"`
}

// PlacementGroupSelector names the placement group instances launch into.
type PlacementGroupSelector struct {
	Name *string `json:"name,omitempty"`
	ID   *string `json:"id,omitempty"`
}

// NetworkInterface is one interface of spec.networkInterfaces: where it
// attaches (network card, device index) and its type (InterfaceType*).
type NetworkInterface struct {
	NetworkCardIndex int32  `json:"networkCardIndex"`
	DeviceIndex      int32  `json:"deviceIndex"`
	InterfaceType    string `json:"interfaceType"`
}

// ConnectionTracking are the ENIs' idle connection tracking timeouts.
type ConnectionTracking struct {
	TCPEstablishedTimeout *int32 `json:"tcpEstablishedTimeout,omitempty"`
	UDPStreamTimeout      *int32 `json:"udpStreamTimeout,omitempty"`
	UDPTimeout            *int32 `json:"udpTimeout,omitempty"`
}

// CPUOptions are the instances' CPU options (Karpenter v1.15).
type CPUOptions struct {
	// NestedVirtualization is the launch template's
	// CpuOptions.NestedVirtualization, "enabled" or "disabled" (unset: none
	// sent). Enabled, the class's NodePools use only the instance types
	// that support it (WantsNestedVirtualization).
	NestedVirtualization *string `json:"nestedVirtualization,omitempty"`
}

// The values of spec.cpuOptions.nestedVirtualization (EC2's
// NestedVirtualizationSpecification).
const (
	NestedVirtualizationEnabled  = "enabled"
	NestedVirtualizationDisabled = "disabled"
)

// WantsNestedVirtualization reports whether the class asks for nested
// virtualization: only then does it narrow the instance types (as
// Karpenter's compatibility check: "disabled" admits every type).
func (s *EC2NodeClassSpec) WantsNestedVirtualization() bool {
	return s != nil && s.CPUOptions != nil && s.CPUOptions.NestedVirtualization != nil &&
		*s.CPUOptions.NestedVirtualization == NestedVirtualizationEnabled
}

// EnclaveOptions say whether the instances are enabled for AWS Nitro
// Enclaves (Karpenter v1.15): the launch template's
// EnclaveOptions.Enabled. Enabled is required when the object is given
// (the CRD's rule; nodeclass.Unsupported names an object without it).
type EnclaveOptions struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// WantsEnclaves reports whether the class enables Nitro Enclaves: only then
// does it narrow the instance types (Karpenter's compatibility check).
func (s *EC2NodeClassSpec) WantsEnclaves() bool {
	return s != nil && s.EnclaveOptions != nil && s.EnclaveOptions.Enabled != nil && *s.EnclaveOptions.Enabled
}

// SelectorTerm selects subnets or security groups by tags, id or name.
type SelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
	Name string            `json:"name,omitempty"`
}

// AMISelectorTerm selects an AMI by alias ("al2023@latest"), tags, id or
// name (or, refused by Joinery, an SSM parameter).
type AMISelectorTerm struct {
	Alias        string            `json:"alias,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	SSMParameter string            `json:"ssmParameter,omitempty"`
}

// BlockDeviceMapping is one EBS volume of the instance.
type BlockDeviceMapping struct {
	DeviceName string `json:"deviceName,omitempty"`
	RootVolume bool   `json:"rootVolume,omitempty"`
	EBS        *EBS   `json:"ebs,omitempty"`
}

// EBS describes an EBS volume.
type EBS struct {
	VolumeSize          *resource.Quantity `json:"volumeSize,omitempty"`
	VolumeType          string             `json:"volumeType,omitempty"`
	IOPS                *int64             `json:"iops,omitempty"`
	Throughput          *int64             `json:"throughput,omitempty"`
	Encrypted           *bool              `json:"encrypted,omitempty"`
	DeleteOnTermination *bool              `json:"deleteOnTermination,omitempty"`
	KMSKeyID            string             `json:"kmsKeyID,omitempty"`
	SnapshotID          string             `json:"snapshotID,omitempty"`
	// VolumeInitializationRate is the rate (MiB/s) at which a volume made
	// from SnapshotID is initialized.
	VolumeInitializationRate *int32 `json:"volumeInitializationRate,omitempty"`
}

// AMI families (EC2NodeClass spec.amiFamily): the bootstrap format of the image.
const (
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyAL2          = "AL2"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
)

// WindowsBuilds is the OS build of each Windows family's EKS image (the
// node.kubernetes.io/windows-build label its nodes carry).
var WindowsBuilds = map[string]string{
	AMIFamilyWindows2019: "10.0.17763",
	AMIFamilyWindows2022: "10.0.20348",
	AMIFamilyWindows2025: "10.0.26100",
}

// Family is the class's AMI family: spec.amiFamily, else the alias term's
// ("al2023@latest" -> AL2023, "windows2022@latest" -> Windows2022), else
// "" (bootstrap.FamilyOf validates the pair).
func (s *EC2NodeClassSpec) Family() string {
	if s.AMIFamily != "" {
		return s.AMIFamily
	}
	for _, t := range s.AMISelectorTerms {
		name, _, ok := strings.Cut(t.Alias, "@")
		if !ok {
			continue
		}
		for _, f := range []string{AMIFamilyAL2023, AMIFamilyAL2, AMIFamilyBottlerocket, AMIFamilyWindows2019, AMIFamilyWindows2022, AMIFamilyWindows2025} {
			if strings.EqualFold(name, f) {
				return f
			}
		}
	}
	return ""
}

// WindowsBuild is the Windows OS build of the class's nodes, "" for a
// Linux family (a Custom class with a Windows image is not told apart,
// as in Karpenter).
func (s *EC2NodeClassSpec) WindowsBuild() string { return WindowsBuilds[s.Family()] }

// MetadataOptions are the instance metadata service options of launched
// instances (EC2NodeClass.spec.metadataOptions, Karpenter's names). Karpenter's
// CRD defaults are endpoint enabled, IPv6 disabled, hop limit 1, tokens
// required; nil fields here mean "not set".
type MetadataOptions struct {
	HTTPEndpoint            *string `json:"httpEndpoint,omitempty"`
	HTTPProtocolIPv6        *string `json:"httpProtocolIPv6,omitempty"`
	HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit,omitempty"`
	HTTPTokens              *string `json:"httpTokens,omitempty"`
}

// windowsRootDevice is the Windows images' root device.
const windowsRootDevice = "/dev/sda1"

// rootDevice is the root device name of the class's images.
func (s *EC2NodeClassSpec) rootDevice() string {
	if s.WindowsBuild() != "" {
		return windowsRootDevice
	}
	return "/dev/xvda"
}

// RootVolumeSize returns the size of the root volume in bytes: the mapping
// marked rootVolume, else the images' root device (/dev/xvda, Windows'
// /dev/sda1), else the first; when none is given, 20 GiB (the AL2023 AMI
// default, Bottlerocket's data volume) or Windows' 50 GiB.
func (s *EC2NodeClassSpec) RootVolumeSize() int64 {
	if len(s.BlockDeviceMappings) == 0 && s.WindowsBuild() != "" {
		return 50 << 30
	}
	root := s.rootDevice()
	var pick *BlockDeviceMapping
	for i := range s.BlockDeviceMappings {
		b := &s.BlockDeviceMappings[i]
		if b.RootVolume || (pick == nil && b.DeviceName == root) {
			pick = b
		}
	}
	if pick == nil && len(s.BlockDeviceMappings) > 0 {
		pick = &s.BlockDeviceMappings[0]
	}
	if pick == nil || pick.EBS == nil || pick.EBS.VolumeSize == nil {
		return 20 << 30
	}
	return pick.EBS.VolumeSize.Value()
}

// DefaultBlockDeviceMappings are the block devices Karpenter launches an
// image family with when spec.blockDeviceMappings is empty: Bottlerocket a
// 4Gi OS volume /dev/xvda and a 20Gi data volume /dev/xvdb, Windows a 50Gi
// root volume /dev/sda1, the others a 20Gi root volume /dev/xvda; gp3,
// encrypted, deleted on termination.
func DefaultBlockDeviceMappings(family string) []BlockDeviceMapping {
	gp3 := func(dev string, size string) BlockDeviceMapping {
		q := resource.MustParse(size)
		t := true
		return BlockDeviceMapping{DeviceName: dev, EBS: &EBS{VolumeSize: &q, VolumeType: "gp3", Encrypted: &t, DeleteOnTermination: &t}}
	}
	if family == AMIFamilyBottlerocket {
		return []BlockDeviceMapping{gp3("/dev/xvda", "4Gi"), gp3("/dev/xvdb", "20Gi")}
	}
	if WindowsBuilds[family] != "" {
		return []BlockDeviceMapping{gp3(windowsRootDevice, "50Gi")}
	}
	return []BlockDeviceMapping{gp3("/dev/xvda", "20Gi")}
}

// LaunchedBlockDeviceMappings are the block devices an instance of the
// class is launched with: spec.blockDeviceMappings, else its family's
// defaults (the family of spec.amiFamily, else of the alias term).
func (s *EC2NodeClassSpec) LaunchedBlockDeviceMappings() []BlockDeviceMapping {
	if len(s.BlockDeviceMappings) > 0 {
		return s.BlockDeviceMappings
	}
	return DefaultBlockDeviceMappings(s.Family())
}

// ExtraEBSVolumes is the number of EBS volumes an instance of the class is
// launched with besides its root volume (the images' root device, or the
// mapping marked rootVolume): each takes an EBS attachment slot.
func (s *EC2NodeClassSpec) ExtraEBSVolumes() int {
	n, root := 0, s.rootDevice()
	for _, b := range s.LaunchedBlockDeviceMappings() {
		if !b.RootVolume && b.DeviceName != root {
			n++
		}
	}
	return n
}
