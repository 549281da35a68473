// Package provreq holds Joinery's view of the upstream ProvisioningRequest
// (autoscaling.x-k8s.io/v1, kubernetes/autoscaler
// cluster-autoscaler/apis/provisioningrequest): a request for capacity
// for a set of pods described by PodTemplates, which Cluster Autoscaler
// and Joinery provision all or nothing. Plain structs, read through the
// dynamic client like package v1; the CRD is
// deploy/crds/autoscaling.x-k8s.io_provisioningrequests.yaml.
package provreq

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ProvisioningRequestGVR is the resource the CRD serves.
var ProvisioningRequestGVR = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// ProvisioningRequest asks for capacity for every pod of its pod sets at once.
type ProvisioningRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// Spec is upstream's ProvisioningRequestSpec (immutable there by CEL).
type Spec struct {
	// PodSets: 1 to 32 pod templates with a count each.
	PodSets []PodSet `json:"podSets"`
	// ProvisioningClassName picks the behaviour (ClassAtomic, ...).
	ProvisioningClassName string `json:"provisioningClassName"`
	// Parameters are the class's parameters (at most 100).
	Parameters map[string]string `json:"parameters,omitempty"`
}

// PodSet is Count pods like the PodTemplate it names (in the request's namespace).
type PodSet struct {
	PodTemplateRef Reference `json:"podTemplateRef"`
	Count          int32     `json:"count"`
}

// Reference names an object in the same namespace.
type Reference struct {
	Name string `json:"name,omitempty"`
}

// Status is upstream's ProvisioningRequestStatus.
type Status struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ProvisioningClassDetails: class-specific details for users (Joinery:
	// DetailTry, DetailNextTry, DetailNodeClaims).
	ProvisioningClassDetails map[string]string `json:"provisioningClassDetails,omitempty"`
}

// Condition types (upstream's).
const (
	Accepted        = "Accepted"
	BookingExpired  = "BookingExpired"
	CapacityRevoked = "CapacityRevoked"
	Provisioned     = "Provisioned"
	Failed          = "Failed"
)

// Provisioning classes. ClassAtomic is upstream's name for all-or-nothing
// scale-up; ClassAtomicShort is the same behaviour under the shorter name
// some tools write.
const (
	ClassCheckCapacity = "check-capacity.autoscaling.x-k8s.io"
	ClassAtomic        = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
	ClassAtomicShort   = "atomic-scale-up.autoscaling.x-k8s.io"
)

// Pod annotations: a pod naming a ProvisioningRequest (in its namespace)
// consumes the capacity it provisioned and is not provisioned for on its
// own. AnnotationConsumeDeprecated is the key of Cluster Autoscaler before
// v1 (still read there).
const (
	AnnotationConsume           = "autoscaling.x-k8s.io/consume-provisioning-request"
	AnnotationConsumeDeprecated = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
	AnnotationClass             = "autoscaling.x-k8s.io/provisioning-class-name"
)

// Details Joinery writes in status.provisioningClassDetails.
const (
	DetailTry        = "joinery.sh/try"          // the number of the current (or last) try
	DetailNextTry    = "joinery.sh/next-try"     // RFC 3339: when the next try starts
	DetailNodeClaims = "joinery.sh/nodeclaims"   // the NodeClaims of the provisioned try
	DetailBookedTill = "joinery.sh/booked-until" // RFC 3339: the booking's end
)

// Limits of the upstream CRD.
const (
	MaxPodSets    = 32
	MaxParameters = 100
)

// ConsumedRequest is the ProvisioningRequest a pod's annotations name ("" for none).
func ConsumedRequest(annotations map[string]string) string {
	if v := annotations[AnnotationConsume]; v != "" {
		return v
	}
	return annotations[AnnotationConsumeDeprecated]
}

// Validate checks what the CRD's schema checks, for requests stored
// before it or read from files: a clear error naming the field.
func (p *ProvisioningRequest) Validate() error {
	if p.Spec.ProvisioningClassName == "" {
		return fmt.Errorf("spec.provisioningClassName: required")
	}
	if n := len(p.Spec.PodSets); n == 0 || n > MaxPodSets {
		return fmt.Errorf("spec.podSets: %d pod sets, want 1 to %d", n, MaxPodSets)
	}
	if len(p.Spec.Parameters) > MaxParameters {
		return fmt.Errorf("spec.parameters: %d entries, at most %d", len(p.Spec.Parameters), MaxParameters)
	}
	for i, s := range p.Spec.PodSets {
		if s.PodTemplateRef.Name == "" {
			return fmt.Errorf("spec.podSets[%d].podTemplateRef.name: required", i)
		}
		if s.Count < 1 {
			return fmt.Errorf("spec.podSets[%d].count: %d, must be at least 1", i, s.Count)
		}
	}
	return nil
}

// Pods is how many pods the request asks capacity for.
func (p *ProvisioningRequest) Pods() int {
	n := 0
	for _, s := range p.Spec.PodSets {
		n += int(s.Count)
	}
	return n
}

// Condition returns the condition of the type (nil when absent).
func (p *ProvisioningRequest) Condition(t string) *metav1.Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Is reports whether the condition of type t is True.
func (p *ProvisioningRequest) Is(t string) bool {
	c := p.Condition(t)
	return c != nil && c.Status == metav1.ConditionTrue
}
