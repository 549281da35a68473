package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim (karpenter.sh/v1) is the request for one node: Joinery writes one
// per launched instance, as Karpenter does.
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeClaimSpec   `json:"spec,omitempty"`
	Status            NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec is karpenter.sh/v1 NodeClaim.spec.
type NodeClaimSpec struct {
	Taints                 []corev1.Taint                         `json:"taints,omitempty"`
	StartupTaints          []corev1.Taint                         `json:"startupTaints,omitempty"`
	Requirements           []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	Resources              ResourceRequirements                   `json:"resources,omitempty"`
	NodeClassRef           *NodeClassReference                    `json:"nodeClassRef,omitempty"`
	ExpireAfter            string                                 `json:"expireAfter,omitempty"`
	TerminationGracePeriod *metav1.Duration                       `json:"terminationGracePeriod,omitempty"`
}

// ResourceRequirements holds the summed requests of the pods the NodeClaim was made for.
type ResourceRequirements struct {
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is karpenter.sh/v1 NodeClaim.status.
type NodeClaimStatus struct {
	NodeName    string              `json:"nodeName,omitempty"`
	ProviderID  string              `json:"providerID,omitempty"`
	ImageID     string              `json:"imageID,omitempty"`
	Capacity    corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Conditions  []metav1.Condition  `json:"conditions,omitempty"`
	// LastPodEventTime is when a pod was last bound to the node, or one
	// of its pods went terminating or terminal (Karpenter v1's field):
	// consolidateAfter counts from it. Nil: no pod event yet.
	LastPodEventTime *metav1.Time `json:"lastPodEventTime,omitempty"`
}

// NodeClaim condition types.
const (
	ConditionLaunched    = "Launched"
	ConditionRegistered  = "Registered"
	ConditionInitialized = "Initialized"
	ConditionReady       = "Ready"
	// ConditionConsolidatable is True once consolidateAfter has passed
	// since the node's last pod event (or its initialization); absent
	// otherwise, as in Karpenter.
	ConditionConsolidatable = "Consolidatable"
	// ConditionInstanceTerminating is True once the instance's termination
	// has begun (Karpenter's condition).
	ConditionInstanceTerminating = "InstanceTerminating"
	// ConditionDisruptionReason is True while the NodeClaim is being
	// disrupted (drift, interruption, expiry); its reason says why.
	ConditionDisruptionReason = "DisruptionReason"
)
