// Package catalog holds EC2 instance types and their offerings: the shapes,
// prices and ENI limits of the embedded us-east-1 catalog (data/README.md
// gives every source), the labels Karpenter puts on a node of each type, and
// the allocatable resources EKS leaves for pods.
package catalog

import (
	"regexp"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// InstanceType is one EC2 instance type as the catalog knows it.
type InstanceType struct {
	Name       string // e.g. "m5.large"
	Family     string // e.g. "m5"
	Category   string // e.g. "m"
	Generation int    // e.g. 5
	Size       string // e.g. "large"
	Arch       string // "amd64" or "arm64"
	VCPU       int
	MemoryMiB  int64 // instance memory before any OS/kubelet overhead, MiB

	GPUCount        int
	GPUManufacturer string // lower-kebab, e.g. "nvidia"
	GPUName         string // e.g. "a10g"
	GPUMemoryMiB    int64  // per GPU, MiB

	AcceleratorCount        int
	AcceleratorManufacturer string
	AcceleratorName         string

	LocalNVMeGB int64 // decimal GB
	MaxPods     int   // EKS ENI formula; 0 = unknown
	// MaxENIs is the type's network interface limit over every card,
	// DefaultCardMaxENIs the default card's (what the VPC CNI uses),
	// NetworkCards the number of cards, IPv4PerENI the IPv4 addresses
	// per interface; 0 = unknown.
	MaxENIs, DefaultCardMaxENIs, NetworkCards, IPv4PerENI int
	NetworkPerformance                                    string // EC2's words, e.g. "Up to 12.5 Gigabit"
	EFACount                                              int
	NetworkBandwidthMbps                                  int64
	EBSBandwidthMbps                                      int64
	Hypervisor                                            string // "nitro", "xen" or "" (bare metal)
	BareMetal                                             bool
	CPUManufacturer                                       string
	// MaxEBSAttachments is the type's EBS attachment limit as the EBS CSI
	// driver knows it (EC2 MaximumEbsAttachments), EBSAttachmentType
	// "shared" (ENIs take slots from it) or "dedicated"; 0 and "" for a type
	// the driver does not list (it then assumes 27, shared).
	MaxEBSAttachments int
	EBSAttachmentType string
	// NestedVirtualization: the type can be launched with nested
	// virtualization enabled (DescribeInstanceTypes lists
	// "nested-virtualization" in ProcessorInfo.SupportedFeatures).
	NestedVirtualization bool
	// NitroEnclaves: the type can be launched with Nitro Enclaves enabled
	// (DescribeInstanceTypes NitroEnclavesSupport "supported").
	NitroEnclaves bool
	// WindowsBuild is set on a type as a Windows class launches it (For):
	// its nodes are kubernetes.io/os=windows of that OS build.
	WindowsBuild string

	// OnDemandPrice is the us-east-1 Linux on-demand list price, USD/hour.
	OnDemandPrice float64
	// SpotSavingsPct is the Spot Instance Advisor saving over on-demand, %;
	// -1 when the advisor has no data for this type.
	SpotSavingsPct int
}

// ENIMaxPods is the EKS VPC CNI max-pods formula: the default network
// card's interfaces times (IPv4 addresses per interface - 1) + 2
// (amazon-eks-ami eni-max-pods.txt; Karpenter ENILimitedPods); 0 when
// either input is unknown.
func ENIMaxPods(defaultCardENIs, ipv4PerENI int) int {
	if defaultCardENIs <= 0 || ipv4PerENI <= 0 {
		return 0
	}
	return defaultCardENIs*(ipv4PerENI-1) + 2
}

// instanceTypeScheme is Karpenter's: category letters, an optional
// "-Ntb", the generation digits, then the rest of the family.
var instanceTypeScheme = regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// NameParts splits an instance type name as Karpenter does for its labels:
// "m6i.large" is family m6i, category m, generation 6, size large; parts
// it cannot find are left empty (0).
func NameParts(name string) (family, category string, generation int, size string) {
	if m := instanceTypeScheme.FindStringSubmatch(name); len(m) == 4 {
		category = m[1]
		generation, _ = strconv.Atoi(m[3])
	}
	if f, s, ok := strings.Cut(name, "."); ok && !strings.Contains(s, ".") {
		family, size = f, s
	}
	return family, category, generation, size
}

// SpotPrice is the estimated spot price in USD/hour: the on-demand price
// reduced by the Spot Instance Advisor saving, or the on-demand price when
// the advisor has no data (Karpenter's fallback as well).
func (it *InstanceType) SpotPrice() float64 {
	if it.SpotSavingsPct <= 0 {
		return it.OnDemandPrice
	}
	return it.OnDemandPrice * float64(100-it.SpotSavingsPct) / 100
}

// ListPrice is the type's static price as capacityType: the spot
// estimate for spot, else the on-demand list price.
func (it *InstanceType) ListPrice(capacityType string) float64 {
	if capacityType == apiv1.CapacityTypeSpot {
		return it.SpotPrice()
	}
	return it.OnDemandPrice
}

// Labels returns the well-known labels a node of this type carries (the
// instance-type labels Karpenter's AWS provider sets; zone and capacity type
// come from the offering).
func (it *InstanceType) Labels() map[string]string {
	l := map[string]string{
		apiv1.LabelInstanceType:     it.Name,
		apiv1.LabelArch:             it.Arch,
		apiv1.LabelOS:               "linux",
		apiv1.LabelInstanceFamily:   it.Family,
		apiv1.LabelInstanceCategory: it.Category,
		apiv1.LabelInstanceGen:      strconv.Itoa(it.Generation),
		apiv1.LabelInstanceSize:     it.Size,
		apiv1.LabelInstanceCPU:      strconv.Itoa(it.VCPU),
		apiv1.LabelInstanceMemory:   strconv.FormatInt(it.MemoryMiB, 10),
		apiv1.LabelInstanceHypervis: it.Hypervisor,
	}
	if it.WindowsBuild != "" {
		l[apiv1.LabelOS], l[apiv1.LabelWindowsBuild] = "windows", it.WindowsBuild
	}
	if it.CPUManufacturer != "" {
		l[apiv1.LabelInstanceCPUManu] = it.CPUManufacturer
	}
	if it.GPUCount > 0 {
		l[apiv1.LabelInstanceGPUCount] = strconv.Itoa(it.GPUCount)
		l[apiv1.LabelInstanceGPUName] = it.GPUName
		l[apiv1.LabelInstanceGPUManu] = it.GPUManufacturer
		l[apiv1.LabelInstanceGPUMem] = strconv.FormatInt(it.GPUMemoryMiB, 10)
	}
	if it.AcceleratorCount > 0 {
		l[apiv1.LabelInstanceAccCount] = strconv.Itoa(it.AcceleratorCount)
		l[apiv1.LabelInstanceAccName] = it.AcceleratorName
		l[apiv1.LabelInstanceAccManu] = it.AcceleratorManufacturer
	}
	if it.LocalNVMeGB > 0 {
		l[apiv1.LabelInstanceNVMe] = strconv.FormatInt(it.LocalNVMeGB, 10)
	}
	if it.NetworkBandwidthMbps > 0 {
		l[apiv1.LabelInstanceNetBW] = strconv.FormatInt(it.NetworkBandwidthMbps, 10)
	}
	if it.EBSBandwidthMbps > 0 {
		l[apiv1.LabelInstanceEBSBW] = strconv.FormatInt(it.EBSBandwidthMbps, 10)
	}
	return l
}

// DefaultEBSAttachments is the EBS CSI driver's limit for a type it does not
// list: the Nitro default, 27 attachments shared with ENIs.
const DefaultEBSAttachments = 27

// EBSVolumeLimit is the number of EBS volumes the EBS CSI driver's node
// plugin lets Kubernetes attach to an instance of this type (the count it
// reports in CSINode, aws-ebs-csi-driver pkg/driver/node.go
// getVolumesLimit): the type's attachment limit, less the root volume and
// the other EBS block devices the instance was launched with, less, when
// ENIs share the limit, every network interface beyond the first; never
// below 1 (Kubernetes reads 0 as no limit).
func (it *InstanceType) EBSVolumeLimit(extraEBSVolumes, enis int) int64 {
	limit, shared := it.MaxEBSAttachments, it.EBSAttachmentType == "shared"
	if limit == 0 {
		limit, shared = DefaultEBSAttachments, true
	}
	n := limit - (extraEBSVolumes + 1)
	if shared && enis > 1 {
		n -= enis - 1
	}
	if n < 1 {
		n = 1
	}
	return int64(n)
}
