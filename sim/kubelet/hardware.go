package kubelet

// Hardware is what an instance of one type is, as EC2 describes it
// (DescribeInstanceTypes) and as the guest sees it: the node agent and the
// kubelet size the Node from this and the user data alone.
type Hardware struct {
	Name string
	// Arch is "amd64" or "arm64".
	Arch      string
	VCPU      int
	MemoryMiB int64 // EC2's MemoryInfo.SizeInMiB
	// MemTotalMiB, when set, is what the guest kernel reports instead of
	// the memory model's figure (a type measured on a real node).
	MemTotalMiB int64
	// Hypervisor is "nitro", "xen" or "" (bare metal).
	Hypervisor string
	BareMetal  bool
	// DefaultCardENIs and IPv4PerENI are the default network card's
	// interface limit and the IPv4 addresses per interface (0: unknown).
	DefaultCardENIs, IPv4PerENI int
	NvidiaGPUs, AMDGPUs, Neuron int
	// EFA is the type's EFA interface limit; a booting node advertises
	// the EFA interfaces its instance has (Instance.EFAInterfaces).
	EFA         int
	LocalNVMeGB int64 // instance store total, decimal GB
	// MaxEBSAttachments and EBSAttachmentType ("shared" or "dedicated") as
	// the EBS CSI driver's table lists the type (0, "": not listed).
	MaxEBSAttachments int
	EBSAttachmentType string
}

// Memory the guest loses before the kubelet sees it. The kernel keeps a
// 64-byte struct page per 4 KiB page (1/64), its image and firmware tables
// a fixed amount, arm64 kernels a 64 MiB CMA area, and a virtualised guest
// a share to the hypervisor's view of the machine (about 1.5% on Nitro,
// more on Xen). Measured nodes lose about 3% at the largest sizes
// (i4i.32xlarge, trn1.32xlarge) and a larger share at small sizes, which
// is why Karpenter's flat 7.5% usually underestimates capacity.
const (
	kernelFixedMiB  = 96
	arm64CMAMiB     = 64
	nitroPerMille   = 15
	xenPerMille     = 25
	structPageRatio = 64
)

// memTotalMiB is MemTotal as the guest kernel reports it: the kubelet's
// memory capacity.
func (h Hardware) memTotalMiB() int64 {
	if h.MemTotalMiB > 0 {
		return h.MemTotalMiB
	}
	lost := h.MemoryMiB/structPageRatio + kernelFixedMiB
	switch {
	case h.BareMetal || h.Hypervisor == "":
	case h.Hypervisor == "xen":
		lost += h.MemoryMiB * xenPerMille / 1000
	default:
		lost += h.MemoryMiB * nitroPerMille / 1000
	}
	if h.Arch == "arm64" {
		lost += arm64CMAMiB
	}
	return h.MemoryMiB - lost
}

// eniMaxPods is the VPC CNI's max pods for the type (nodeadm's
// eni_max_pods, bootstrap.sh's eni-max-pods.txt, Bottlerocket's pluto):
// default-card ENIs x (IPv4 per ENI - 1) + 2, or 110 when EC2 does not say.
func (h Hardware) eniMaxPods() int64 {
	if h.DefaultCardENIs <= 0 || h.IPv4PerENI <= 0 {
		return 110
	}
	return int64(h.DefaultCardENIs*(h.IPv4PerENI-1) + 2)
}

// windowsMaxPods is a Windows node's pod limit: one network interface,
// its addresses less the node's own (EKS user guide, "Deploy Windows
// nodes").
func (h Hardware) windowsMaxPods() int64 {
	if h.IPv4PerENI <= 1 {
		return 110
	}
	return int64(h.IPv4PerENI - 1)
}

// ebsVolumeLimit is the count the EBS CSI driver's node plugin reports in
// CSINode (aws-ebs-csi-driver getVolumesLimit): the attachment limit (27
// shared for a type the driver does not list), less the root volume and
// the other EBS block devices, less every ENI beyond the first when ENIs
// share the limit; at least 1.
func (h Hardware) ebsVolumeLimit(extraEBS, enis int) int32 {
	limit, shared := h.MaxEBSAttachments, h.EBSAttachmentType == "shared"
	if limit == 0 {
		limit, shared = 27, true
	}
	n := limit - extraEBS - 1
	if shared && enis > 1 {
		n -= enis - 1
	}
	return int32(max(n, 1))
}
