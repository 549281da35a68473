// Package capacitybuffer holds Joinery's view of SIG Autoscaling's
// CapacityBuffer (autoscaling.x-k8s.io, kubernetes/autoscaler
// cluster-autoscaler/apis/capacitybuffer; served as v1alpha1 and v1beta1,
// the same schema, as Karpenter's CapacityBuffer gate reads it): spare
// capacity kept ready for a number of pods shaped like a PodTemplate or a
// scalable workload's template. Plain structs, read through the dynamic
// client like package v1.
package capacitybuffer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CapacityBufferGVR is the resource the CRD deploy/crds/autoscaling.x-k8s.io_capacitybuffers.yaml serves (its storage version).
var CapacityBufferGVR = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Resource: "capacitybuffers"}

// ActiveCapacity is the one provisioning strategy (the default): the
// buffer is kept as free capacity for its virtual pods.
const ActiveCapacity = "buffer.x-k8s.io/active-capacity"

// Condition types (upstream's).
const (
	ConditionReadyForProvisioning = "ReadyForProvisioning"
	ConditionProvisioning         = "Provisioning"
)

// Supported scalableRef kinds (apiGroup apps).
const (
	KindDeployment  = "Deployment"
	KindReplicaSet  = "ReplicaSet"
	KindStatefulSet = "StatefulSet"
)

// CapacityBuffer declares spare capacity for Replicas (or Percentage of
// a workload's replicas, or as many as Limits hold) pods shaped like
// PodTemplateRef or ScalableRef's pod template.
type CapacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// Spec is upstream's CapacityBufferSpec.
type Spec struct {
	// ProvisioningStrategy: only buffer.x-k8s.io/active-capacity (the
	// default when unset) is handled.
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`
	// PodTemplateRef names a PodTemplate in the buffer's namespace: one
	// chunk's shape. Exactly one of PodTemplateRef and ScalableRef.
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`
	// ScalableRef names a Deployment, ReplicaSet or StatefulSet (apps)
	// in the buffer's namespace: its pod template is the chunk's shape.
	ScalableRef *ScalableRef `json:"scalableRef,omitempty"`
	// Replicas is the number of chunks.
	Replicas *int32 `json:"replicas,omitempty"`
	// Percentage of ScalableRef's replicas, rounded up (at least 1); with
	// Replicas the larger of the two.
	Percentage *int32 `json:"percentage,omitempty"`
	// Limits caps the chunks' summed requests; alone it means as many
	// chunks as fit.
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// LocalObjectRef names an object in the same namespace.
type LocalObjectRef struct {
	Name string `json:"name"`
}

// ScalableRef names an object with a scale subresource.
type ScalableRef struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Status is upstream's CapacityBufferStatus.
type Status struct {
	PodTemplateRef        *LocalObjectRef    `json:"podTemplateRef,omitempty"`
	Replicas              *int32             `json:"replicas,omitempty"`
	PodTemplateGeneration *int64             `json:"podTemplateGeneration,omitempty"`
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
	ProvisioningStrategy  *string            `json:"provisioningStrategy,omitempty"`
}

// Strategy is the buffer's provisioning strategy, the default when unset.
func (b *CapacityBuffer) Strategy() string {
	if b.Spec.ProvisioningStrategy == nil || *b.Spec.ProvisioningStrategy == "" {
		return ActiveCapacity
	}
	return *b.Spec.ProvisioningStrategy
}
