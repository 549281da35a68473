// Package resources is a fixed-size vector of the resource quantities the
// solver packs: cpu in millicores, memory and ephemeral-storage in bytes,
// pods, extended resources and attachable EBS volumes as counts. A fixed array keeps the hot path
// of the solver free of map lookups and allocations.
package resources

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Index of each resource in a List.
const (
	CPU    = iota // millicores
	Memory        // bytes
	EphemeralStorage
	Pods
	NvidiaGPU
	AMDGPU
	Neuron
	EFA
	PodENI
	// EBSVolumes counts EBS volumes attached to a node: a node's entry is
	// the attach limit the EBS CSI driver reports (CSINode
	// spec.drivers[ebs.csi.aws.com].allocatable.count), a pod's the EBS
	// volumes it brings. It is no Kubernetes resource: Node and NodeClaim
	// resource lists never carry it (FromResourceList and ToResourceList
	// skip it).
	EBSVolumes
	Count // number of tracked resources
)

// NoLimit is a count no request reaches: the EBSVolumes entry of a node
// whose attach limit is unknown (the kube-scheduler then sets none).
const NoLimit = int64(1) << 40

// Names are the Kubernetes resource names, by index.
var Names = [Count]corev1.ResourceName{
	CPU:              corev1.ResourceCPU,
	Memory:           corev1.ResourceMemory,
	EphemeralStorage: corev1.ResourceEphemeralStorage,
	Pods:             corev1.ResourcePods,
	NvidiaGPU:        "nvidia.com/gpu",
	AMDGPU:           "amd.com/gpu",
	Neuron:           "aws.amazon.com/neuron",
	EFA:              "vpc.amazonaws.com/efa",
	PodENI:           "vpc.amazonaws.com/pod-eni",
	EBSVolumes:       "attachable-volumes-aws-ebs",
}

// List holds one quantity per tracked resource (cpu in millicores, bytes for
// memory and storage, counts for the rest).
type List [Count]int64

// FromResourceList converts a Kubernetes ResourceList. Names Joinery does not
// track are returned in unknown (sorted), so a caller can report that no
// instance type offers them.
func FromResourceList(rl corev1.ResourceList) (l List, unknown []string) {
	for name, q := range rl {
		i := IndexOf(name)
		if i == EBSVolumes {
			continue // from CSINode, never from a resource list
		}
		if i < 0 {
			if strings.HasPrefix(string(name), "requests.") || strings.HasPrefix(string(name), "hugepages-") {
				continue
			}
			if q.IsZero() {
				continue
			}
			unknown = append(unknown, string(name))
			continue
		}
		if i == CPU {
			l[i] = q.MilliValue()
		} else {
			l[i] = q.Value()
		}
	}
	sort.Strings(unknown)
	return l, unknown
}

// IndexOf returns the index of a resource name, or -1.
func IndexOf(name corev1.ResourceName) int {
	for i, n := range Names {
		if n == name {
			return i
		}
	}
	return -1
}

// ToResourceList converts back, leaving out zero quantities.
func (l List) ToResourceList() corev1.ResourceList {
	rl := corev1.ResourceList{}
	for i, v := range l {
		if v == 0 || i == EBSVolumes {
			continue
		}
		rl[Names[i]] = l.Quantity(i)
	}
	return rl
}

// Add returns l + o.
func (l List) Add(o List) List {
	for i := range l {
		l[i] += o[i]
	}
	return l
}

// Sub returns l - o.
func (l List) Sub(o List) List {
	for i := range l {
		l[i] -= o[i]
	}
	return l
}

// Max returns the element-wise maximum.
func (l List) Max(o List) List {
	for i := range l {
		if o[i] > l[i] {
			l[i] = o[i]
		}
	}
	return l
}

// Fits reports whether l fits within capacity c in every resource.
func (l List) Fits(c List) bool {
	for i := range l {
		if l[i] > c[i] {
			return false
		}
	}
	return true
}

// String formats non-zero entries, e.g. "cpu=1500m memory=2Gi pods=3".
func (l List) String() string {
	var parts []string
	for i, v := range l {
		if v != 0 {
			q := l.Quantity(i)
			parts = append(parts, fmt.Sprintf("%s=%s", Names[i], q.String()))
		}
	}
	return strings.Join(parts, " ")
}

// HasExtended reports whether l requests any accelerator or network device
// (GPUs, Neuron, EFA, pod ENIs): the resources only some instance types have.
func (l List) HasExtended() bool {
	for r := NvidiaGPU; r <= PodENI; r++ {
		if l[r] > 0 {
			return true
		}
	}
	return false
}
