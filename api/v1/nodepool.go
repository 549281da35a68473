package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool (karpenter.sh/v1) says what nodes Joinery may launch for pending
// pods: requirements on instance types and offerings, taints, limits, weight
// and disruption settings.
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodePoolSpec   `json:"spec,omitempty"`
	Status            NodePoolStatus `json:"status,omitempty"`
}

// NodePoolSpec is karpenter.sh/v1 NodePool.spec.
type NodePoolSpec struct {
	Template   NodeClaimTemplate `json:"template"`
	Disruption Disruption        `json:"disruption,omitempty"`
	// Limits caps the summed capacity of all nodes of this pool (cpu,
	// memory, nodes, any extended resource). Usage equal to a limit is allowed.
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// Weight orders pools: the highest-weight pool that can take a pod wins.
	Weight *int32 `json:"weight,omitempty"`
	// Replicas makes a static NodePool (Karpenter v1.8, StaticCapacity
	// gate): exactly this many NodeClaims are kept (capped by limits.nodes),
	// replaced when lost or drifted, never consolidated, and the pool is
	// never used to provision nodes for pending pods. Only limits.nodes may
	// be set with it, weight may not, and a pool cannot change between
	// static and dynamic. Honoured only with --feature-gates
	// StaticCapacity=true.
	Replicas *int64 `json:"replicas,omitempty"`
}

// NodeClaimTemplate is NodePool.spec.template.
type NodeClaimTemplate struct {
	ObjectMeta ObjectMeta            `json:"metadata,omitempty"`
	Spec       NodeClaimTemplateSpec `json:"spec"`
}

// ObjectMeta is the subset of metadata a template may carry.
type ObjectMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is NodePool.spec.template.spec.
type NodeClaimTemplateSpec struct {
	Taints        []corev1.Taint                         `json:"taints,omitempty"`
	StartupTaints []corev1.Taint                         `json:"startupTaints,omitempty"`
	Requirements  []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	NodeClassRef  *NodeClassReference                    `json:"nodeClassRef"`
	// ExpireAfter is a Go duration ("720h") or "Never".
	ExpireAfter            string           `json:"expireAfter,omitempty"`
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// NodeSelectorRequirementWithMinValues is a node selector requirement that may
// also demand at least MinValues distinct values of its key among the
// instance types a NodeClaim may launch as.
type NodeSelectorRequirementWithMinValues struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

// NodeClassReference points at the EC2NodeClass a pool launches with.
type NodeClassReference struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// Disruption is NodePool.spec.disruption.
type Disruption struct {
	// ConsolidateAfter is a Go duration or "Never".
	ConsolidateAfter    string   `json:"consolidateAfter,omitempty"`
	ConsolidationPolicy string   `json:"consolidationPolicy,omitempty"`
	Budgets             []Budget `json:"budgets,omitempty"`
}

// Consolidation policies. Balanced (Karpenter v1.14) is refused.
const (
	ConsolidationPolicyWhenEmpty                = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced (Karpenter v1.14+) consolidates empty
	// and underutilized nodes, but approves a move only when its share of
	// the pool's cost saved is at least half its share of the pool's
	// disruption cost (disruption.BalancedK).
	ConsolidationPolicyBalanced = "Balanced"
)

// ConsolidationPolicies are the values spec.disruption.consolidationPolicy accepts.
var ConsolidationPolicies = []string{ConsolidationPolicyWhenEmpty, ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidationPolicyBalanced}

// Budget caps how many nodes may be disrupted at once ("10%" or "5").
type Budget struct {
	Nodes    string           `json:"nodes"`
	Reasons  []string         `json:"reasons,omitempty"`
	Schedule *string          `json:"schedule,omitempty"`
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// NodePoolStatus is NodePool.status (Nodes and NodeClassObservedGeneration
// are Karpenter's, decoded so that a status copied from Karpenter reads).
type NodePoolStatus struct {
	Resources                   corev1.ResourceList `json:"resources,omitempty"`
	Conditions                  []metav1.Condition  `json:"conditions,omitempty"`
	Nodes                       *int64              `json:"nodes,omitempty"`
	NodeClassObservedGeneration int64               `json:"nodeClassObservedGeneration,omitempty"`
}

// WeightOrZero returns spec.weight, 0 when unset.
func (np *NodePool) WeightOrZero() int32 {
	if np.Spec.Weight == nil {
		return 0
	}
	return *np.Spec.Weight
}

// IsStatic says whether the pool is a static NodePool (spec.replicas set).
func (np *NodePool) IsStatic() bool { return np != nil && np.Spec.Replicas != nil }
