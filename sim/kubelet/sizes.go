package kubelet

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Filesystem overhead: what mkfs keeps of a volume for its log, inode
// tables and metadata, so the kubelet's nodefs capacity is below the
// volume's size. xfs (AL2023 and AL2 roots, every agent's RAID0 array of
// the instance store) keeps little; ext4 (Bottlerocket's data volume) its
// inode tables.
const (
	xfsKeepsPerMille  = 4
	ext4KeepsPerMille = 16
)

// sizes is the Node's capacity and allocatable as the node agent
// configures the kubelet and the kubelet reports them: cpu from the vCPUs,
// memory from what the kernel sees, nodefs from the filesystem; pods from
// the kubelet's maxPods (user data, else the ENI limit) capped by
// podsPerCore; allocatable less kube-reserved, system-reserved and the
// hard eviction thresholds (nodeadm internal/kubelet/config.go,
// bootstrap.sh, Bottlerocket's kubelet-config template).
func sizes(h Hardware, cfg *BootConfig, fsBytes int64, variant string) (capacity, allocatable corev1.ResourceList) {
	cpu := int64(h.VCPU) * 1000
	memKi := h.memTotalMiB() * 1024
	pods := h.eniMaxPods()
	if cfg.Format == FormatWindows {
		pods = h.windowsMaxPods()
	}
	if cfg.MaxPods != nil {
		pods = int64(*cfg.MaxPods)
	}
	if cfg.PodsPerCore != nil && *cfg.PodsPerCore > 0 {
		pods = min(pods, int64(*cfg.PodsPerCore)*int64(h.VCPU))
	}
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memKi<<10, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(fsBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		"hugepages-1Gi":                 *resource.NewQuantity(0, resource.BinarySI),
		"hugepages-2Mi":                 *resource.NewQuantity(0, resource.BinarySI),
	}
	for name, n := range devices(h, variant) {
		capacity[name] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	}

	reserved := kubeReserved(h, cfg, cpu)
	withUser(reserved, cfg.KubeReserved, capacity)
	system := corev1.ResourceList{}
	withUser(system, cfg.SystemReserved, capacity)
	evict := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: percentOf(capacity, corev1.ResourceEphemeralStorage, 10),
	}
	withUser(evict, evictionKeys(cfg.EvictionHard), capacity)

	allocatable = corev1.ResourceList{}
	for name, q := range capacity {
		a := q.DeepCopy()
		for _, l := range []corev1.ResourceList{reserved, system, evict} {
			if r, ok := l[name]; ok {
				a.Sub(r)
			}
		}
		if a.Sign() < 0 {
			a = *resource.NewQuantity(0, q.Format)
		}
		allocatable[name] = a
	}
	return capacity, allocatable
}

// devices are the extended resources the device plugins advertise: GPUs
// and Neuron devices only with the image variant that carries their driver
// (no EKS image carries AMD's), EFA interfaces with the EFA plugin.
func devices(h Hardware, variant string) map[corev1.ResourceName]int {
	out := map[corev1.ResourceName]int{}
	if h.NvidiaGPUs > 0 && variant == "nvidia" {
		out["nvidia.com/gpu"] = h.NvidiaGPUs
	}
	if h.Neuron > 0 && variant == "neuron" {
		out["aws.amazon.com/neuron"] = h.Neuron
	}
	if h.EFA > 0 {
		out["vpc.amazonaws.com/efa"] = h.EFA
	}
	return out
}

// kubeReserved is the node agent's default: cpu by nodeadm's steps (6% of
// the first core, 1% of the second, 0.5% of cores 3-4, 0.25% above, each
// step in whole millicores), memory 11 MiB per pod + 255 MiB and 1 GiB of
// nodefs. nodeadm and bootstrap.sh count the pods by the ENI limit even
// when maxPods is set; Bottlerocket counts its max-pods setting.
func kubeReserved(h Hardware, cfg *BootConfig, cpuMilli int64) corev1.ResourceList {
	pods := h.eniMaxPods()
	switch {
	case cfg.Format == FormatWindows:
		pods = h.windowsMaxPods()
		if cfg.MaxPods != nil {
			pods = int64(*cfg.MaxPods)
		}
	case cfg.Format == FormatBottlerocket && cfg.MaxPods != nil:
		pods = int64(*cfg.MaxPods)
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(reservedCPU(cpuMilli), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity((11*pods+255)<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
}

func reservedCPU(milli int64) int64 {
	steps := []struct{ from, to, basisPoints int64 }{
		{0, 1000, 600}, {1000, 2000, 100}, {2000, 4000, 50}, {4000, math.MaxInt64, 25},
	}
	var out int64
	for _, s := range steps {
		if milli > s.from {
			out += (min(milli, s.to) - s.from) * s.basisPoints / 10000
		}
	}
	return out
}

// evictionKeys maps the kubelet's eviction signals onto the resources they
// hold back from allocatable; the other signals (inodes, imagefs) do not.
func evictionKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		switch k {
		case "memory.available":
			out[string(corev1.ResourceMemory)] = v
		case "nodefs.available":
			out[string(corev1.ResourceEphemeralStorage)] = v
		}
	}
	return out
}

// withUser sets what user data gives (quantities, or for eviction
// thresholds a percentage of capacity) over the defaults in l.
func withUser(l corev1.ResourceList, user map[string]string, capacity corev1.ResourceList) {
	for k, v := range user {
		name := corev1.ResourceName(k)
		if _, tracked := capacity[name]; !tracked {
			continue
		}
		if pct, ok := percent(v); ok {
			l[name] = percentOf(capacity, name, pct)
			continue
		}
		if q, err := resource.ParseQuantity(v); err == nil {
			l[name] = q
		}
	}
}

func percent(v string) (float64, bool) {
	if len(v) < 2 || v[len(v)-1] != '%' {
		return 0, false
	}
	q, err := resource.ParseQuantity(v[:len(v)-1])
	if err != nil {
		return 0, false
	}
	return q.AsApproximateFloat64(), true
}

func percentOf(capacity corev1.ResourceList, name corev1.ResourceName, pct float64) resource.Quantity {
	c := capacity[name]
	return *resource.NewQuantity(int64(math.Ceil(float64(c.Value())*pct/100)), resource.BinarySI)
}

// filesystemBytes is the size mkfs leaves of a volume for the
// filesystem ("xfs" or "ext4").
func filesystemBytes(volumeBytes int64, fs string) int64 {
	keeps := int64(xfsKeepsPerMille)
	if fs == "ext4" {
		keeps = ext4KeepsPerMille
	}
	return volumeBytes - volumeBytes*keeps/1000
}
