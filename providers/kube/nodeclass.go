package kube

import (
	"context"
	"sort"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// NodeClasses returns every EC2NodeClass in the cache, sorted by name
// (objects that do not decode are left out; the API server's schema
// refuses them).
func (c *Cluster) NodeClasses() []*apiv1.EC2NodeClass {
	var out []*apiv1.EC2NodeClass
	for _, o := range c.nodeClasses.GetStore().List() {
		nc := &apiv1.EC2NodeClass{}
		if fromUnstructured(o, nc) == nil {
			out = append(out, nc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PatchNodeClass merge-patches an EC2NodeClass's metadata or spec.
func (c *Cluster) PatchNodeClass(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.EC2NodeClassGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// PatchNodeClassStatus merge-patches an EC2NodeClass's status subresource.
func (c *Cluster) PatchNodeClassStatus(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.EC2NodeClassGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// OnNodeClassChange calls fn with the name of every EC2NodeClass added,
// updated or deleted.
func (c *Cluster) OnNodeClassChange(fn func(name string)) {
	name := func(obj interface{}) {
		if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			fn(k)
		}
	}
	_, _ = c.nodeClasses.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: name, UpdateFunc: func(_, n interface{}) { name(n) }, DeleteFunc: name,
	})
}

// OnNodeClassReadyChange calls fn when an EC2NodeClass's Ready condition
// changes status (not on the informer's first list: the memo of
// unschedulable pods survives restarts).
func (c *Cluster) OnNodeClassReadyChange(fn func()) {
	ready := func(obj interface{}) string {
		nc := &apiv1.EC2NodeClass{}
		if fromUnstructured(obj, nc) != nil {
			return ""
		}
		if cond := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionReady); cond != nil {
			return string(cond.Status)
		}
		return ""
	}
	_, _ = c.nodeClasses.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(o, n interface{}) {
			if ready(o) != ready(n) {
				fn()
			}
		},
	})
}
