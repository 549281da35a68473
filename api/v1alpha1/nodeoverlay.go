// Package v1alpha1 holds Joinery's view of Karpenter's karpenter.sh/v1alpha1
// NodeOverlay (kubernetes-sigs/karpenter pkg/apis/v1alpha1): price and
// extended-capacity adjustments for the instance types its requirements
// select. Plain structs, read through the dynamic client like package v1.
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NodeOverlayGVR is the resource the CRD deploy/crds/karpenter.sh_nodeoverlays.yaml serves.
var NodeOverlayGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1alpha1", Resource: "nodeoverlays"}

// NodeOverlay adjusts what the solver assumes of the instance types its
// requirements select: their price, and extended resources they carry.
type NodeOverlay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeOverlaySpec   `json:"spec"`
	Status            NodeOverlayStatus `json:"status,omitempty"`
}

// NodeOverlaySpec is Karpenter's: requirements over the labels a node of
// the type would have (well-known labels, karpenter.sh/nodepool, template
// labels), one of price and priceAdjustment, capacity, weight.
type NodeOverlaySpec struct {
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`
	// PriceAdjustment is "+0.05" / "-0.5" (USD/hour) or "+10%" / "-15%".
	PriceAdjustment *string `json:"priceAdjustment,omitempty"`
	// Price replaces the price (USD/hour).
	Price *string `json:"price,omitempty"`
	// Capacity adds extended resources (never cpu, memory, ephemeral-storage, pods).
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Weight orders overlays: higher first (1-10000; unset is 0).
	Weight *int32 `json:"weight,omitempty"`
}

// NodeSelectorRequirement is a requirement with Karpenter's operators
// (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte).
type NodeSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// NodeOverlayStatus holds ValidationSucceeded and Ready.
type NodeOverlayStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Conditions and their reasons, as Karpenter sets them.
const (
	ConditionValidationSucceeded = "ValidationSucceeded"
	ConditionReady               = "Ready"
	ReasonConflict               = "Conflict"
	ReasonRuntimeValidation      = "RuntimeValidation"
)

// WeightOrZero is the overlay's weight, 0 when unset.
func (o *NodeOverlay) WeightOrZero() int32 {
	if o.Spec.Weight == nil {
		return 0
	}
	return *o.Spec.Weight
}
