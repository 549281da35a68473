package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/joinery/joinery/api/capacitybuffer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// WatchCapacityBuffers adds the CapacityBuffer informer (call it before
// Start): only a worker with --feature-gates CapacityBuffer=true reads them.
func (c *Cluster) WatchCapacityBuffers() error {
	c.capacityBuffers = c.dynFactory.ForResource(capacitybuffer.CapacityBufferGVR).Informer()
	return c.capacityBuffers.SetTransform(stripManagedFields)
}

// OnCapacityBufferChange calls fn on every CapacityBuffer add, update and
// delete (nothing without WatchCapacityBuffers).
func (c *Cluster) OnCapacityBufferChange(fn func()) {
	if c.capacityBuffers == nil {
		return
	}
	_, _ = c.capacityBuffers.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) { fn() }, UpdateFunc: func(o, n interface{}) { fn() }, DeleteFunc: func(interface{}) { fn() },
	})
}

// CapacityBuffers are the cached CapacityBuffers by namespace/name (nil
// without WatchCapacityBuffers); one that does not decode is left out and
// named in bad.
func (c *Cluster) CapacityBuffers() (out []*capacitybuffer.CapacityBuffer, bad []string) {
	if c.capacityBuffers == nil {
		return nil, nil
	}
	for _, o := range c.capacityBuffers.GetStore().List() {
		b := &capacitybuffer.CapacityBuffer{}
		if err := fromUnstructured(o, b); err != nil {
			if u, ok := o.(*unstructured.Unstructured); ok {
				bad = append(bad, fmt.Sprintf("CapacityBuffer %s/%s: cannot decode: %v", u.GetNamespace(), u.GetName(), err))
			}
			continue
		}
		if b.DeletionTimestamp == nil {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	sort.Strings(bad)
	return out, bad
}

// CountCapacityBuffers lists CapacityBuffers once, for a worker that does
// not watch them to say they are ignored (0 when the CRD is not installed).
func (c *Cluster) CountCapacityBuffers(ctx context.Context) int {
	l, err := c.Dynamic.Resource(capacitybuffer.CapacityBufferGVR).List(ctx, metav1.ListOptions{Limit: 100})
	if err != nil {
		return 0
	}
	return len(l.Items)
}

// SetCapacityBufferStatus merge-patches a CapacityBuffer's status.
func (c *Cluster) SetCapacityBufferStatus(ctx context.Context, ns, name string, st capacitybuffer.Status) error {
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	_, err = c.Dynamic.Resource(capacitybuffer.CapacityBufferGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// Scalable reads a CapacityBuffer's scalableRef (apps Deployment,
// ReplicaSet or StatefulSet): its pod template and replicas (unset: 1).
func (c *Cluster) Scalable(ctx context.Context, ns, kind, name string) (corev1.PodTemplateSpec, int32, error) {
	one := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	switch kind {
	case capacitybuffer.KindDeployment:
		o, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, 0, err
		}
		return o.Spec.Template, one(o.Spec.Replicas), nil
	case capacitybuffer.KindReplicaSet:
		o, err := c.Kube.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, 0, err
		}
		return o.Spec.Template, one(o.Spec.Replicas), nil
	case capacitybuffer.KindStatefulSet:
		o, err := c.Kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return corev1.PodTemplateSpec{}, 0, err
		}
		return o.Spec.Template, one(o.Spec.Replicas), nil
	}
	return corev1.PodTemplateSpec{}, 0, fmt.Errorf("unsupported kind %q", kind)
}
