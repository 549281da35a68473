package catalog

import (
	"math"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	"k8s.io/apimachinery/pkg/api/resource"
)

// VMMemoryOverheadPercent is the share of instance memory the hypervisor and
// firmware keep; Karpenter's default VM_MEMORY_OVERHEAD_PERCENT (0.075).
const VMMemoryOverheadPercent = 0.075

// DefaultMaxPods is used when the catalog has no ENI data for a type
// (Kubernetes' recommended per-node ceiling).
const DefaultMaxPods = 110

// NodeShape is what a node of one instance type offers: Capacity as the
// kubelet reports it and Allocatable after kube-reserved, system-reserved
// and the hard eviction threshold (cpu millicores, bytes, counts).
type NodeShape struct {
	Capacity    resources.List
	Allocatable resources.List
}

// Launch is what a node's shape depends on besides its instance type: its
// kubelet settings and the volumes and network interfaces it is launched
// with.
type Launch struct {
	Kubelet *apiv1.KubeletConfiguration // nil: EKS defaults
	// RootVolumeBytes is the size of the volume the kubelet's ephemeral
	// storage lives on.
	RootVolumeBytes int64
	// ExtraEBSVolumes are the EBS volumes launched besides the root volume;
	// ENIs the network interfaces attached when the EBS CSI driver's node
	// plugin starts (0: one, the primary).
	ExtraEBSVolumes int
	ENIs            int
	// InstanceStoreRAID0 is EC2NodeClass spec.instanceStorePolicy RAID0:
	// on a type with instance store volumes, ephemeral storage lives on
	// them (their total size) instead of the root volume.
	InstanceStoreRAID0 bool
	// NodeMemory, when set, is the memory capacity registered nodes of a
	// type reported (Market.LaunchOf): it replaces the VM overhead
	// estimate.
	NodeMemory func(instanceType string) (bytes int64, ok bool)
	// ENIPodsReserved: the node agent reserves kube-reserved memory for
	// the type's ENI max pods whatever maxPods says (nodeadm and
	// bootstrap.sh, the AL2023 and AL2 families); Bottlerocket and Custom
	// images reserve for the node's own pod limit.
	ENIPodsReserved bool
	// NetworkInterfaces are the class's spec.networkInterfaces: the efa
	// resource is their efa-only count and the default card's efa-only
	// interfaces give no pod addresses (InterfacePods).
	NetworkInterfaces []apiv1.NetworkInterface
}

// LaunchOf is how an EC2NodeClass launches its nodes (nil: EKS defaults).
func LaunchOf(spec *apiv1.EC2NodeClassSpec) Launch {
	if spec == nil {
		return Launch{RootVolumeBytes: 20 << 30, ENIPodsReserved: true}
	}
	return Launch{Kubelet: spec.Kubelet, RootVolumeBytes: spec.RootVolumeSize(), ExtraEBSVolumes: spec.ExtraEBSVolumes(),
		InstanceStoreRAID0: spec.RAID0(), ENIPodsReserved: eniPodsReserved(spec),
		ENIs: len(spec.NetworkInterfaces), NetworkInterfaces: spec.NetworkInterfaces}
}

// eniPodsReserved: the family is AL2023 or AL2 (or unnamed: EKS's
// default, AL2023), by spec.amiFamily or, when that is unset, by the alias
// term.
func eniPodsReserved(spec *apiv1.EC2NodeClassSpec) bool {
	family := spec.AMIFamily
	for _, t := range spec.AMISelectorTerms {
		if name, _, ok := strings.Cut(t.Alias, "@"); ok && family == "" {
			family = name
		}
	}
	switch strings.ToLower(family) {
	case "bottlerocket", "custom", "windows2019", "windows2022", "windows2025":
		return false
	}
	return true
}

// Shape is ShapeOf with the given kubelet settings and root volume size in
// bytes, and no other volume or network interface.
func (it *InstanceType) Shape(kubelet *apiv1.KubeletConfiguration, rootVolumeBytes int64) NodeShape {
	return it.ShapeOf(Launch{Kubelet: kubelet, RootVolumeBytes: rootVolumeBytes, ENIPodsReserved: true})
}

// ShapeOf computes capacity and allocatable of a node of this type launched
// as l says. Ephemeral storage is the root volume's size, or with
// InstanceStoreRAID0 on a type with instance store the store's total size
// (Karpenter's instance-local-nvme, decimal GB).
//
// Formulas (amazon-eks-ami nodeadm kubelet config; Karpenter
// pkg/providers/instancetype/types.go):
//   - memory capacity = what nodes of the type reported (NodeMemory), else
//     MemoryMiB − ceil(MemoryMiB × 0.075) MiB (VM overhead)
//   - pods = the ENI max-pods formula default_card_max_enis × (ipv4_per_eni − 1) + 2
//     (less the default card's efa-only interfaces of spec.networkInterfaces)
//     (a Windows node: ipv4_per_eni − 1, WindowsMaxPods), or kubelet maxPods;
//     podsPerCore × vCPU caps it when set
//   - kube-reserved memory = 11 MiB × pods + 255 MiB, counting the ENI
//     max pods when ENIPodsReserved (AL2023, AL2) even if maxPods is set
//   - kube-reserved cpu = 6% of the first core + 1% of the second + 0.5% of
//     cores 3–4 + 0.25% of every core above 4
//   - kube-reserved ephemeral-storage = 1 GiB
//   - eviction hard: memory.available 100 MiB, nodefs.available 10%
//
// An explicit kubeReserved, systemReserved or evictionHard in the kubelet
// settings replaces the matching default. Expressions in maxPods and the
// reserved maps are the values resolved for the type (ResolveKubelet). The EBSVolumes entry (capacity
// and allocatable) is EBSVolumeLimit: what the EBS CSI driver reports in
// CSINode for the node.
func (it *InstanceType) ShapeOf(l Launch) NodeShape {
	rootVolumeBytes := l.RootVolumeBytes
	if l.InstanceStoreRAID0 && it.LocalNVMeGB > 0 {
		// Karpenter: the instance store's TotalSizeInGB, decimal.
		rootVolumeBytes = it.LocalNVMeGB * 1_000_000_000
	}
	var c resources.List
	c[resources.CPU] = int64(it.VCPU) * 1000
	mib := it.MemoryMiB
	c[resources.Memory] = (mib - int64(math.Ceil(float64(mib)*VMMemoryOverheadPercent))) << 20
	if l.NodeMemory != nil {
		if b, ok := l.NodeMemory(it.Name); ok {
			c[resources.Memory] = b
		}
	}
	c[resources.EphemeralStorage] = rootVolumeBytes
	reservedPods := it.eniPods()
	kubelet, pods := it.podsOf(l)
	c[resources.Pods] = pods
	if !l.ENIPodsReserved {
		reservedPods = pods
	}
	switch it.GPUManufacturer {
	case "nvidia":
		c[resources.NvidiaGPU] = int64(it.GPUCount)
	case "amd":
		c[resources.AMDGPU] = int64(it.GPUCount)
	}
	if it.AcceleratorManufacturer == "aws" {
		c[resources.Neuron] = int64(it.AcceleratorCount)
	}
	c[resources.EFA] = int64(it.EFAInterfaces(l.NetworkInterfaces))
	c[resources.EBSVolumes] = it.EBSVolumeLimit(l.ExtraEBSVolumes, max(l.ENIs, 1))

	var kubeReserved resources.List
	kubeReserved[resources.CPU] = kubeReservedCPU(c[resources.CPU])
	kubeReserved[resources.Memory] = (11*reservedPods + 255) << 20
	kubeReserved[resources.EphemeralStorage] = 1 << 30
	var evict resources.List
	evict[resources.Memory] = 100 << 20
	evict[resources.EphemeralStorage] = int64(math.Ceil(float64(rootVolumeBytes) * 0.10))
	var systemReserved resources.List
	if kubelet != nil {
		override(&kubeReserved, kubelet.KubeReserved, c)
		override(&systemReserved, kubelet.SystemReserved, c)
		override(&evict, kubelet.EvictionHard, c)
	}
	a := c.Sub(kubeReserved).Sub(systemReserved).Sub(evict)
	for i := range a {
		if a[i] < 0 {
			a[i] = 0
		}
	}
	return NodeShape{Capacity: c, Allocatable: a}
}

// kubeReservedCPU applies the EKS cpu reservation steps to a capacity in millicores.
func kubeReservedCPU(milli int64) int64 {
	steps := []struct {
		upTo int64   // millicores
		pct  float64 // share reserved within this step
	}{{1000, 0.06}, {2000, 0.01}, {4000, 0.005}, {math.MaxInt64, 0.0025}}
	var reserved float64
	var prev int64
	for _, s := range steps {
		if milli <= prev {
			break
		}
		top := min(milli, s.upTo)
		reserved += float64(top-prev) * s.pct
		prev = s.upTo
	}
	return int64(math.Ceil(reserved))
}

// override replaces entries of l with explicit kubelet values: quantities
// ("200m", "1Gi") for kube/system-reserved; for evictionHard the keys are
// signals ("memory.available", "nodefs.available") and values may be a
// percentage of capacity ("10%").
func override(l *resources.List, m map[string]string, capacity resources.List) {
	for k, v := range m {
		idx := -1
		switch k {
		case "cpu":
			idx = resources.CPU
		case "memory", "memory.available":
			idx = resources.Memory
		case "ephemeral-storage", "nodefs.available":
			idx = resources.EphemeralStorage
		}
		if idx < 0 {
			continue
		}
		if len(v) > 1 && v[len(v)-1] == '%' {
			var pct float64
			if q, err := resource.ParseQuantity(v[:len(v)-1]); err == nil {
				pct = q.AsApproximateFloat64()
			}
			l[idx] = int64(math.Ceil(float64(capacity[idx]) * pct / 100))
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			continue
		}
		if idx == resources.CPU {
			l[idx] = q.MilliValue()
		} else {
			l[idx] = q.Value()
		}
	}
}
