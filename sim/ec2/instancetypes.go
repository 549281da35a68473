package ec2

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/joinery/joinery/catalog"
)

var instanceTypeFields = fields[*catalog.InstanceType]{
	"instance-type": func(it *catalog.InstanceType) []string { return []string{it.Name} },
	"processor-info.supported-architecture": func(it *catalog.InstanceType) []string {
		return []string{ec2Arch(it.Arch)}
	},
	"vcpu-info.default-vcpus":           func(it *catalog.InstanceType) []string { return []string{strconv.Itoa(it.VCPU)} },
	"memory-info.size-in-mib":           func(it *catalog.InstanceType) []string { return []string{strconv.FormatInt(it.MemoryMiB, 10)} },
	"bare-metal":                        func(it *catalog.InstanceType) []string { return []string{strconv.FormatBool(it.BareMetal)} },
	"hypervisor":                        func(it *catalog.InstanceType) []string { return []string{it.Hypervisor} },
	"supported-usage-class":             func(*catalog.InstanceType) []string { return []string{"on-demand", "spot"} },
	"supported-virtualization-type":     func(*catalog.InstanceType) []string { return []string{"hvm"} },
	"processor-info.supported-features": func(it *catalog.InstanceType) []string { return processorFeatures(it) },
	"nitro-enclaves-support":            func(it *catalog.InstanceType) []string { return []string{nitroEnclavesSupport(it)} },
	"instance-storage-supported": func(it *catalog.InstanceType) []string {
		return []string{strconv.FormatBool(it.LocalNVMeGB > 0)}
	},
}

func (s *Server) describeInstanceTypes(f form) (withRequestID, error) {
	cat := s.opts.Catalog
	items := cat.Types
	if names := f.strings("InstanceType"); len(names) > 0 {
		items = nil
		var missing []string
		for _, n := range names {
			it, ok := cat.Get(n)
			if !ok {
				missing = append(missing, n)
				continue
			}
			items = append(items, it)
		}
		if len(missing) > 0 {
			return nil, newError(http.StatusBadRequest, CodeInvalidInstanceType,
				"The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
		}
	}
	idx := indexOf(cat.Types)
	items, next, err := filterPage(f, items, instanceTypeFields, nil, func(it *catalog.InstanceType) uint64 { return idx[it] }, "instancetypes", 100, 5, 100)
	if err != nil {
		return nil, err
	}
	out := &describeInstanceTypesResponse{NextToken: next}
	for _, it := range items {
		out.InstanceTypes = append(out.InstanceTypes, instanceTypeInfo(it))
	}
	return out, nil
}

// instanceTypeInfo renders a catalog entry as EC2's InstanceTypeInfo.
// Values the catalog does not hold are left out rather than invented
// (network performance where the data has none, current generation, CPU
// clock). The network cards: the default (index 0) with the default
// card's interface limit and, on multi-card types, the others sharing the
// rest; the type's baseline bandwidth is split evenly over them. GPU names are the catalog's label values, upper-cased for NVIDIA
// ("a10g" → "A10G"); lower-casing gives the Karpenter label back.
func instanceTypeInfo(it *catalog.InstanceType) instanceTypeXML {
	x := instanceTypeXML{
		InstanceType:                 it.Name,
		SupportedUsageClasses:        []string{"on-demand", "spot"},
		SupportedRootDeviceTypes:     []string{"ebs"},
		SupportedVirtualizationTypes: []string{"hvm"},
		BareMetal:                    it.BareMetal,
		Hypervisor:                   it.Hypervisor,
		NitroEnclavesSupport:         nitroEnclavesSupport(it),
		ProcessorInfo: processorInfoXML{
			SupportedArchitectures: []string{ec2Arch(it.Arch)},
			Manufacturer:           manufacturerName(it.CPUManufacturer),
			SupportedFeatures:      processorFeatures(it),
		},
		VCpuInfo:           vcpuInfoXML{DefaultVCpus: it.VCPU},
		MemoryInfo:         memoryInfoXML{SizeInMiB: it.MemoryMiB},
		NetworkInfo:        networkCardsXML(it),
		PlacementGroupInfo: placementGroupInfoXML{SupportedStrategies: it.PlacementStrategies()},
	}
	if it.Arch == "arm64" {
		x.SupportedBootModes = []string{"uefi"}
	} else {
		x.SupportedBootModes = []string{"legacy-bios", "uefi"}
	}
	if it.LocalNVMeGB > 0 {
		x.InstanceStorageSupported = true
		x.InstanceStorageInfo = &instanceStorageInfoXML{TotalSizeInGB: it.LocalNVMeGB, NvmeSupport: "required"}
	}
	if it.EBSBandwidthMbps > 0 {
		x.EbsInfo = &ebsInfoXML{EbsOptimizedSupport: "default", EbsOptimizedInfo: &ebsOptimizedInfoXML{MaximumBandwidthInMbps: it.EBSBandwidthMbps}}
	}
	if it.MaxEBSAttachments > 0 {
		if x.EbsInfo == nil {
			x.EbsInfo = &ebsInfoXML{EbsOptimizedSupport: "unsupported"}
		}
		x.EbsInfo.MaximumEbsAttachments, x.EbsInfo.AttachmentLimitType = it.MaxEBSAttachments, it.EBSAttachmentType
	}
	if it.GPUCount > 0 || it.GPUName != "" {
		name := it.GPUName
		if it.GPUManufacturer == "nvidia" {
			name = strings.ToUpper(name)
		}
		x.GpuInfo = &gpuInfoXML{
			Gpus: []gpuDeviceXML{{Name: name, Manufacturer: manufacturerName(it.GPUManufacturer), Count: it.GPUCount,
				MemoryInfo: memoryInfoXML{SizeInMiB: it.GPUMemoryMiB}}},
			TotalGpuMemoryInMiB: int64(it.GPUCount) * it.GPUMemoryMiB,
		}
	}
	if it.AcceleratorCount > 0 && it.AcceleratorManufacturer == "aws" {
		name := it.AcceleratorName
		if name != "" {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		x.NeuronInfo = &neuronInfoXML{NeuronDevices: []neuronDeviceXML{{Count: it.AcceleratorCount, Name: name}}}
	} else if it.AcceleratorCount > 0 {
		x.InferenceAcceleratorInfo = &inferenceInfoXML{Accelerators: []inferenceDeviceXML{{Count: it.AcceleratorCount,
			Name: it.AcceleratorName, Manufacturer: manufacturerName(it.AcceleratorManufacturer)}}}
	}
	return x
}

// networkCardsXML is the type's NetworkInfo: interface limits, cards,
// bandwidth and EFA as the catalog has them.
func networkCardsXML(it *catalog.InstanceType) networkInfoXML {
	n := networkInfoXML{EfaSupported: it.EFACount > 0, NetworkPerformance: it.NetworkPerformance,
		MaximumNetworkInterfaces: it.MaxENIs, Ipv4AddressesPerInterface: it.IPv4PerENI}
	if it.EFACount > 0 {
		n.EfaInfo = &efaInfoXML{MaximumEfaInterfaces: it.EFACount}
	}
	cards := it.Cards()
	if cards == 0 {
		return n
	}
	zero := 0
	n.MaximumNetworkCards, n.DefaultNetworkCardIndex = it.NetworkCards, &zero
	for i := range cards {
		c := networkCardXML{NetworkCardIndex: i, NetworkPerformance: it.NetworkPerformance, MaximumNetworkInterfaces: it.CardENIs(i)}
		if it.NetworkBandwidthMbps > 0 {
			c.BaselineBandwidthInGbps = float64(it.NetworkBandwidthMbps) / 1000 / float64(cards)
		}
		n.NetworkCards = append(n.NetworkCards, c)
	}
	return n
}

// manufacturerName maps the catalog's lower-case manufacturer to EC2's.
func manufacturerName(m string) string {
	switch m {
	case "intel":
		return "Intel"
	case "amd":
		return "AMD"
	case "aws":
		return "AWS"
	case "nvidia":
		return "NVIDIA"
	case "habana":
		return "Habana"
	case "qualcomm":
		return "Qualcomm"
	}
	return m
}

type offeringItem struct {
	key          uint64
	instanceType string
	location     string
}

func (s *Server) describeInstanceTypeOfferings(f form) (withRequestID, error) {
	lt := f.get("LocationType")
	if lt == "" {
		lt = "region"
	}
	// locations, each with the zone whose offerings it shows ("" for the
	// region: a type is in the region if some zone sells it).
	var locations, zones []string
	switch lt {
	case "region":
		locations, zones = []string{s.opts.Region}, []string{""}
	case "availability-zone":
		locations, zones = s.opts.Zones, s.opts.Zones
	case "availability-zone-id":
		for _, sn := range s.subnets {
			locations, zones = append(locations, sn.zoneID), append(zones, sn.zone)
		}
	default:
		return nil, invalidParameter("Invalid LocationType %q", lt)
	}
	var items []offeringItem
	for _, it := range s.opts.Catalog.Types {
		for i, loc := range locations {
			if z := zones[i]; (z == "" && len(s.offeredZones(it)) == 0) || (z != "" && !s.offered(it, z)) {
				continue
			}
			items = append(items, offeringItem{key: uint64(len(items)), instanceType: it.Name, location: loc})
		}
	}
	items, next, err := filterPage(f, items, fields[offeringItem]{
		"instance-type": func(o offeringItem) []string { return []string{o.instanceType} },
		"location":      func(o offeringItem) []string { return []string{o.location} },
	}, nil, func(o offeringItem) uint64 { return o.key }, "offerings", 1000, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeInstanceTypeOfferingsResponse{NextToken: next}
	for _, o := range items {
		out.Offerings = append(out.Offerings, instanceTypeOfferingXML{InstanceType: o.instanceType, LocationType: lt, Location: o.location})
	}
	return out, nil
}
