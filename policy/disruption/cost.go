package disruption

import (
	"math"
	"strconv"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Disruption cost, as Karpenter v1.14+ defines it (pkg/utils/disruption,
// pkg/controllers/disruption/types.go): what evicting a pod costs, and
// what taking a node away costs.
const (
	// PerNodeBaseDisruptionCost is what draining a node costs by itself
	// (cordon, drain, replacement latency), with no pod on it.
	PerNodeBaseDisruptionCost = 1.0
	// annotationBand divides karpenter.sh/disruption-cost and
	// pod-deletion-cost: the int32 range then spans about ±16 pods.
	annotationBand = 1 << 27
	// priorityBand divides the pod's priority: system-node-critical
	// (2,000,001,000) then weighs about 60 pods, before the clamp.
	priorityBand = 1 << 25
	// maxEvictionCost clamps EvictionCost to [-maxEvictionCost, maxEvictionCost].
	maxEvictionCost = 10.0
)

// EvictionCost is the cost of evicting a pod with these annotations and
// priority: 1, plus karpenter.sh/disruption-cost / 2^27 (when the pod
// has it; else controller.kubernetes.io/pod-deletion-cost / 2^27), plus
// priority / 2^25, clamped to [-10, 10]. An annotation that is not a
// base-10 int32 counts as absent, and a malformed disruption-cost does not
// fall back to pod-deletion-cost (as Karpenter, with its
// PodDeletionCostManagement gate off: Joinery never writes
// pod-deletion-cost itself).
func EvictionCost(annotations map[string]string, priority *int32) float64 {
	cost := 1.0
	if v, ok := annotations[apiv1.AnnotationDisruptionCost]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			cost += float64(n) / annotationBand
		}
	} else if v, ok := annotations[corev1.PodDeletionCost]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			cost += float64(n) / annotationBand
		}
	}
	if priority != nil {
		cost += float64(*priority) / priorityBand
	}
	return math.Max(-maxEvictionCost, math.Min(maxEvictionCost, cost))
}

// PodEvictionCost is EvictionCost of a pod.
func PodEvictionCost(p *corev1.Pod) float64 {
	return EvictionCost(p.Annotations, p.Spec.Priority)
}

// RescheduleDisruptionCost is what taking a node away costs: the per-node
// base plus every reschedulable pod's EvictionCost, each floored at 0 (a
// pod that declares itself free to evict cannot discount the node).
func RescheduleDisruptionCost(evictionCosts []float64) float64 {
	c := PerNodeBaseDisruptionCost
	for _, e := range evictionCosts {
		c += math.Max(0, e)
	}
	return c
}

// EvictionCost of a candidate's pod (see the package function).
func (p Pod) EvictionCost() float64 { return EvictionCost(p.Annotations, p.Priority) }

// DisruptionCost is the candidate's RescheduleDisruptionCost. A candidate
// built without one (below the per-node base) counts each of its pods at
// the default cost 1.
func (c Candidate) DisruptionCost() float64 {
	if c.RescheduleDisruptionCost >= PerNodeBaseDisruptionCost {
		return c.RescheduleDisruptionCost
	}
	return PerNodeBaseDisruptionCost + float64(c.Pods)
}

// Empty reports whether no pod of the candidate adds to its disruption
// cost (Karpenter v1.14's IsEmpty): no reschedulable pod, or only pods
// whose eviction cost is 0 or less, and no capacity buffer's virtual pod
// (Karpenter's emptiness skips those too). Emptiness deletes such nodes;
// their pods, if any, are evicted and provisioned for again.
func (c Candidate) Empty() bool {
	return c.BufferPods == 0 && c.DisruptionCost() <= PerNodeBaseDisruptionCost
}

// SavingsRatio is the candidate's price per unit of disruption cost
// (USD/hour): consolidation tries candidates in this order, highest
// first, so a full node is not taken before a near-empty one of the same
// price.
func (c Candidate) SavingsRatio() float64 { return c.Price / c.DisruptionCost() }
