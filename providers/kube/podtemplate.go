package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodTemplate reads a PodTemplate from the API server: a
// ProvisioningRequest's pod sets and a CapacityBuffer's podTemplateRef name
// them; they are read when used, not watched.
func (c *Cluster) PodTemplate(ctx context.Context, namespace, name string) (*corev1.PodTemplate, error) {
	return c.Kube.CoreV1().PodTemplates(namespace).Get(ctx, name, metav1.GetOptions{})
}
