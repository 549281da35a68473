package kube

import (
	"context"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// DeleteNodeClaimKeepFinalizers asks the API server to delete a NodeClaim
// and leaves its finalizers alone: with a termination finalizer the
// object stays until that flow removes it. A missing one is not an error.
func (c *Cluster) DeleteNodeClaimKeepFinalizers(ctx context.Context, name string) error {
	err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Delete(ctx, name, metav1.DeleteOptions{})
	if errors.IsNotFound(err) {
		return nil
	}
	return err
}

// OnNodePoolSpecChange calls fn when a NodePool is created after the
// informer's initial list, or its spec changes (metadata.generation), or
// its USD/hour limit annotation does (an annotation bumps no generation,
// yet it changes what the pool may launch).
func (c *Cluster) OnNodePoolSpecChange(fn func()) {
	_, _ = c.nodePools.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ interface{}, initial bool) {
			if !initial {
				fn()
			}
		},
		UpdateFunc: func(o, n interface{}) {
			if nodePoolSpecChanged(o, n) {
				fn()
			}
		},
	})
}

// nodePoolSpecChanged reports whether an update changed what a NodePool
// may launch: its generation or its USD/hour limit (unknown objects: yes).
func nodePoolSpecChanged(o, n interface{}) bool {
	ou, ok1 := o.(*unstructured.Unstructured)
	nu, ok2 := n.(*unstructured.Unstructured)
	return !ok1 || !ok2 || ou.GetGeneration() != nu.GetGeneration() ||
		ou.GetAnnotations()[apiv1.AnnotationLimitUSDPerHour] != nu.GetAnnotations()[apiv1.AnnotationLimitUSDPerHour]
}
