package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/joinery/joinery/api/provreq"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// ProvisioningRequestsServed reports whether the API server serves
// autoscaling.x-k8s.io/v1 provisioningrequests (the CRD is installed).
func (c *Cluster) ProvisioningRequestsServed() bool {
	rl, err := c.Kube.Discovery().ServerResourcesForGroupVersion(provreq.ProvisioningRequestGVR.GroupVersion().String())
	if err != nil {
		return false
	}
	for _, r := range rl.APIResources {
		if r.Name == provreq.ProvisioningRequestGVR.Resource {
			return true
		}
	}
	return false
}

// WatchProvisioningRequests adds the ProvisioningRequest informer (call it
// before Start); from then on pods that consume a ProvisioningRequest are
// not provisionable on their own (ProvisionablePods leaves them out), as
// in Cluster Autoscaler.
func (c *Cluster) WatchProvisioningRequests() error {
	c.provReqs = c.dynFactory.ForResource(provreq.ProvisioningRequestGVR).Informer()
	return c.provReqs.SetTransform(stripManagedFields)
}

// WatchesProvisioningRequests reports whether WatchProvisioningRequests was called.
func (c *Cluster) WatchesProvisioningRequests() bool { return c.provReqs != nil }

// OnProvisioningRequestEvent registers handlers on the ProvisioningRequest
// informer (nothing without WatchProvisioningRequests).
func (c *Cluster) OnProvisioningRequestEvent(h cache.ResourceEventHandler) {
	if c.provReqs != nil {
		_, _ = c.provReqs.AddEventHandler(h)
	}
}

// ProvisioningRequests are the cached requests by namespace/name; one that
// does not decode is named in bad.
func (c *Cluster) ProvisioningRequests() (out []*provreq.ProvisioningRequest, bad []string) {
	if c.provReqs == nil {
		return nil, nil
	}
	for _, o := range c.provReqs.GetStore().List() {
		pr := &provreq.ProvisioningRequest{}
		if err := fromUnstructured(o, pr); err != nil {
			if u, ok := o.(*unstructured.Unstructured); ok {
				bad = append(bad, fmt.Sprintf("ProvisioningRequest %s/%s: cannot decode: %v", u.GetNamespace(), u.GetName(), err))
			}
			continue
		}
		out = append(out, pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	sort.Strings(bad)
	return out, bad
}

// ProvisioningRequest is one cached request (nil, nil when absent).
func (c *Cluster) ProvisioningRequest(namespace, name string) (*provreq.ProvisioningRequest, error) {
	if c.provReqs == nil {
		return nil, nil
	}
	o, ok, err := c.provReqs.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	pr := &provreq.ProvisioningRequest{}
	if err := fromUnstructured(o, pr); err != nil {
		return nil, fmt.Errorf("ProvisioningRequest %s/%s: cannot decode: %w", namespace, name, err)
	}
	return pr, nil
}

// PatchProvisioningRequestStatus merge-patches a request's status
// (conditions, provisioningClassDetails).
func (c *Cluster) PatchProvisioningRequestStatus(ctx context.Context, namespace, name string, st provreq.Status) error {
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	_, err = c.Dynamic.Resource(provreq.ProvisioningRequestGVR).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// ConsumingPods are the pods of the namespace that consume the named
// request (its annotation), sorted by name.
func (c *Cluster) ConsumingPods(namespace, name string) []*corev1.Pod {
	all, _ := c.Pods.Pods(namespace).List(labels.Everything())
	var out []*corev1.Pod
	for _, p := range all {
		if provreq.ConsumedRequest(p.Annotations) == name {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
