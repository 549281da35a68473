package aws

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/joinery/joinery/catalog"
)

// InstanceTypes returns every instance type EC2 describes in the region
// that can be a Linux node (DescribeInstanceTypes, 100 a page, filtered to
// HVM and x86_64/arm64 as Karpenter filters), each converted by
// InstanceTypeFromInfo with embedded supplying what the API does not say.
func (c *Client) InstanceTypes(ctx context.Context, embedded *catalog.Catalog) ([]*catalog.InstanceType, error) {
	var out []*catalog.InstanceType
	p := ec2.NewDescribeInstanceTypesPaginator(c.ec2, &ec2.DescribeInstanceTypesInput{
		Filters: []types.Filter{
			{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
			{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
		},
		MaxResults: aws.Int32(100),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstanceTypes: %w", err)
		}
		for _, info := range page.InstanceTypes {
			if it, ok := InstanceTypeFromInfo(info, embedded); ok {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// InstanceTypeFromInfo makes a catalog entry of EC2's description of a
// type, deriving every fact from it as Karpenter's AWS provider does:
// family, category, generation and size from the name; vCPUs, memory,
// architecture, hypervisor, bare metal, CPU manufacturer, nested
// virtualization support (never taken from embedded: the answer says it);
// GPUs (the single GPU kind's count, name, manufacturer and memory,
// lower-kebab-cased) and
// accelerators (Neuron devices, else one kind of inference accelerator);
// local NVMe (InstanceStorageInfo.TotalSizeInGB unless NVMe is
// unsupported); EFA interfaces; the EBS and network bandwidth (the sum of
// the cards' baseline, Mbps); the EBS attachment limit; and max pods by
// the VPC CNI's ENI formula from the default card's interfaces. What the
// API does not say comes from embedded when it knows the type: the
// on-demand price (else 0: the Pricing API must supply one), the Spot
// Instance Advisor saving, and the network bandwidth, EBS limit or ENI
// numbers an answer leaves out. ok is false for a type that cannot be a
// Kubernetes node (no x86_64/arm64, no vCPUs or memory, mac*).
func InstanceTypeFromInfo(info types.InstanceTypeInfo, embedded *catalog.Catalog) (*catalog.InstanceType, bool) {
	name := string(info.InstanceType)
	it := &catalog.InstanceType{Name: name, SpotSavingsPct: -1}
	it.Family, it.Category, it.Generation, it.Size = catalog.NameParts(name)
	processorFacts(it, info.ProcessorInfo)
	if info.VCpuInfo != nil {
		it.VCPU = int(aws.ToInt32(info.VCpuInfo.DefaultVCpus))
	}
	if info.MemoryInfo != nil {
		it.MemoryMiB = aws.ToInt64(info.MemoryInfo.SizeInMiB)
	}
	if it.Arch == "" || it.VCPU == 0 || it.MemoryMiB == 0 || strings.HasPrefix(it.Family, "mac") {
		return nil, false
	}
	it.Hypervisor = string(info.Hypervisor)
	it.BareMetal = aws.ToBool(info.BareMetal)
	// Karpenter's nitroEnclavesCompatibility reads this for
	// spec.enclaveOptions.enabled.
	it.NitroEnclaves = info.NitroEnclavesSupport == types.NitroEnclavesSupportSupported
	if g := info.GpuInfo; g != nil && len(g.Gpus) == 1 {
		gpu := g.Gpus[0]
		it.GPUCount = int(aws.ToInt32(gpu.Count))
		it.GPUName = lowerKebab(aws.ToString(gpu.Name))
		it.GPUManufacturer = lowerKebab(aws.ToString(gpu.Manufacturer))
		if gpu.MemoryInfo != nil {
			it.GPUMemoryMiB = int64(aws.ToInt32(gpu.MemoryInfo.SizeInMiB))
		}
	}
	if n := info.NeuronInfo; n != nil && len(n.NeuronDevices) == 1 {
		d := n.NeuronDevices[0]
		it.AcceleratorCount = int(aws.ToInt32(d.Count))
		it.AcceleratorName = lowerKebab(aws.ToString(d.Name))
		it.AcceleratorManufacturer = "aws"
	} else if a := info.InferenceAcceleratorInfo; a != nil && len(a.Accelerators) == 1 {
		d := a.Accelerators[0]
		it.AcceleratorCount = int(aws.ToInt32(d.Count))
		it.AcceleratorName = lowerKebab(aws.ToString(d.Name))
		it.AcceleratorManufacturer = lowerKebab(aws.ToString(d.Manufacturer))
	}
	if s := info.InstanceStorageInfo; s != nil && s.NvmeSupport != types.EphemeralNvmeSupportUnsupported {
		it.LocalNVMeGB = aws.ToInt64(s.TotalSizeInGB)
	}
	if e := info.EbsInfo; e != nil {
		if e.EbsOptimizedInfo != nil {
			it.EBSBandwidthMbps = int64(aws.ToInt32(e.EbsOptimizedInfo.MaximumBandwidthInMbps))
		}
		if n := aws.ToInt32(e.MaximumEbsAttachments); n > 0 {
			switch e.AttachmentLimitType {
			case types.AttachmentLimitTypeShared, types.AttachmentLimitTypeDedicated:
				it.MaxEBSAttachments, it.EBSAttachmentType = int(n), string(e.AttachmentLimitType)
			}
		}
	}
	if n := info.NetworkInfo; n != nil {
		it.NetworkPerformance = aws.ToString(n.NetworkPerformance)
		it.MaxENIs = int(aws.ToInt32(n.MaximumNetworkInterfaces))
		it.IPv4PerENI = int(aws.ToInt32(n.Ipv4AddressesPerInterface))
		it.NetworkCards = int(aws.ToInt32(n.MaximumNetworkCards))
		def := aws.ToInt32(n.DefaultNetworkCardIndex)
		var gbps float64
		for _, card := range n.NetworkCards {
			if aws.ToInt32(card.NetworkCardIndex) == def {
				it.DefaultCardMaxENIs = int(aws.ToInt32(card.MaximumNetworkInterfaces))
			}
			gbps += aws.ToFloat64(card.BaselineBandwidthInGbps)
		}
		if len(n.NetworkCards) == 0 {
			it.DefaultCardMaxENIs = it.MaxENIs // one card: all of the type's interfaces
		}
		it.NetworkBandwidthMbps = int64(math.Round(gbps * 1000))
		if n.EfaInfo != nil {
			it.EFACount = int(aws.ToInt32(n.EfaInfo.MaximumEfaInterfaces))
		}
	}
	it.MaxPods = catalog.ENIMaxPods(it.DefaultCardMaxENIs, it.IPv4PerENI)
	if e, ok := lookup(embedded, name); ok {
		it.OnDemandPrice, it.SpotSavingsPct = e.OnDemandPrice, e.SpotSavingsPct
		if it.NetworkBandwidthMbps == 0 {
			it.NetworkBandwidthMbps = e.NetworkBandwidthMbps
		}
		if it.MaxEBSAttachments == 0 {
			it.MaxEBSAttachments, it.EBSAttachmentType = e.MaxEBSAttachments, e.EBSAttachmentType
		}
		if it.MaxPods == 0 {
			it.MaxENIs, it.DefaultCardMaxENIs, it.NetworkCards, it.IPv4PerENI, it.MaxPods =
				e.MaxENIs, e.DefaultCardMaxENIs, e.NetworkCards, e.IPv4PerENI, e.MaxPods
		}
	}
	return it, true
}

// processorFacts reads the architecture, the CPU manufacturer and whether
// the type can run with nested virtualization enabled (the feature Karpenter
// checks for spec.cpuOptions.nestedVirtualization: enabled).
func processorFacts(it *catalog.InstanceType, p *types.ProcessorInfo) {
	if p == nil {
		return
	}
	for _, a := range p.SupportedArchitectures {
		switch a {
		case types.ArchitectureTypeX8664:
			it.Arch = "amd64"
		case types.ArchitectureTypeArm64:
			it.Arch = "arm64"
		}
		if it.Arch != "" {
			break
		}
	}
	it.CPUManufacturer = lowerKebab(aws.ToString(p.Manufacturer))
	it.NestedVirtualization = slices.Contains(p.SupportedFeatures, types.SupportedAdditionalProcessorFeatureNestedVirtualization)
}

// lowerKebab is Karpenter's label form of an EC2 name ("Radeon Pro V520"
// -> "radeon-pro-v520").
func lowerKebab(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }

func lookup(c *catalog.Catalog, name string) (*catalog.InstanceType, bool) {
	if c == nil {
		return nil, false
	}
	return c.Get(name)
}
