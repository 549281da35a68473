package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// InvalidNodePool is a NodePool that failed validation, with every reason.
type InvalidNodePool struct {
	Name string
	Err  error
	// NodeClassNotReady: the pool is valid but its EC2NodeClass cannot
	// launch yet (Err says which condition and why).
	NodeClassNotReady bool
}

// NodePools returns the valid NodePools sorted by name, defaulted
// (NodePool.SetDefaults, as the CRD's schema defaults would), and the
// invalid ones with their field errors (they are skipped, never fatal).
// Each version of a pool is converted, defaulted and validated once; the
// pools are shared with every other reader: read-only.
func (c *Cluster) NodePools() ([]*apiv1.NodePool, []InvalidNodePool) {
	var out []*apiv1.NodePool
	var bad []InvalidNodePool
	for _, o := range c.nodePools.GetStore().List() {
		np, err := c.pools.get(o)
		if np == nil {
			name := ""
			if u, ok := o.(*unstructured.Unstructured); ok {
				name = u.GetName()
			}
			bad = append(bad, InvalidNodePool{Name: name, Err: fmt.Errorf("cannot decode: %w", err)})
			continue
		}
		if np.DeletionTimestamp != nil {
			continue
		}
		if err != nil {
			bad = append(bad, InvalidNodePool{Name: np.Name, Err: err})
			continue
		}
		out = append(out, np)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Slice(bad, func(i, j int) bool { return bad[i].Name < bad[j].Name })
	return out, bad
}

// ValidNodePool is the named NodePool as NodePools returns it (defaulted,
// shared: read-only), false when it is missing, deleting or invalid.
func (c *Cluster) ValidNodePool(name string) (*apiv1.NodePool, bool) {
	o, ok, err := c.nodePools.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	np, err := c.pools.get(o)
	if np == nil || np.DeletionTimestamp != nil {
		return nil, false
	}
	return np, err == nil
}

// finishNodePool defaults a NodePool and validates it, as NodePools
// returns it.
func finishNodePool(np *apiv1.NodePool) error {
	np.SetDefaults()
	if errs := np.Validate(); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// NodeClass returns the EC2NodeClass with the given name.
func (c *Cluster) NodeClass(name string) (*apiv1.EC2NodeClass, error) {
	o, ok, err := c.nodeClasses.GetStore().GetByKey(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("EC2NodeClass %q not found", name)
	}
	nc := &apiv1.EC2NodeClass{}
	return nc, fromUnstructured(o, nc)
}

// NodeClaims returns every NodeClaim in the informer cache, sorted by name.
// The objects are shared with every other reader of the cache: read-only.
func (c *Cluster) NodeClaims() []*apiv1.NodeClaim {
	var out []*apiv1.NodeClaim
	for _, o := range c.nodeClaims.GetStore().List() {
		if nc, err := c.claims.get(o); err == nil {
			out = append(out, nc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WaitNodeClaimsCached waits until the informer cache holds every named
// NodeClaim: a plan made right after another must see the NodeClaims the
// first one wrote as in flight, or it buys their nodes again. It returns
// an error naming the first missing one after timeout.
func (c *Cluster) WaitNodeClaimsCached(ctx context.Context, names []string, timeout time.Duration) error {
	return c.waitCached(ctx, names, timeout, true)
}

// WaitNodeClaimsGone waits until the informer cache no longer holds the
// named NodeClaims (deleted moments ago), up to timeout.
func (c *Cluster) WaitNodeClaimsGone(ctx context.Context, names []string, timeout time.Duration) error {
	return c.waitCached(ctx, names, timeout, false)
}

// waitCached polls the cache until each named NodeClaim is in it (held)
// or out of it, up to timeout.
func (c *Cluster) waitCached(ctx context.Context, names []string, timeout time.Duration, held bool) error {
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for c.HasNodeClaim(name) != held {
			if time.Now().After(deadline) {
				if held {
					return fmt.Errorf("nodeclaim %s written but not in the informer cache after %s", name, timeout)
				}
				return fmt.Errorf("nodeclaim %s deleted but still in the informer cache after %s", name, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// NodeClaimNames lists, from the API server (not the cache, which may not
// have a NodeClaim written a moment ago), the NodeClaims the label
// selector selects.
func (c *Cluster) NodeClaimNames(ctx context.Context, selector string) ([]string, error) {
	list, err := c.Dynamic.Resource(apiv1.NodeClaimGVR).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i, u := range list.Items {
		names[i] = u.GetName()
	}
	return names, nil
}

// HasNodeClaim reports whether the informer cache holds the named
// NodeClaim (false: deleted, or not yet seen).
func (c *Cluster) HasNodeClaim(name string) bool {
	_, ok, _ := c.nodeClaims.GetStore().GetByKey(name)
	return ok
}

// NodeClaim reads one NodeClaim from the API server (not the cache), so a
// just-written object is seen. errors.IsNotFound tells a deleted one.
func (c *Cluster) NodeClaim(ctx context.Context, name string) (*apiv1.NodeClaim, error) {
	u, err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	nc := &apiv1.NodeClaim{}
	return nc, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc)
}

// CreateNodeClaim writes a new NodeClaim object.
func (c *Cluster) CreateNodeClaim(ctx context.Context, nc *apiv1.NodeClaim) error {
	nc.APIVersion, nc.Kind = "karpenter.sh/v1", "NodeClaim"
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(nc)
	if err != nil {
		return err
	}
	_, err = c.Dynamic.Resource(apiv1.NodeClaimGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if errors.IsAlreadyExists(err) {
		return nil // a retried activity already wrote it
	}
	return err
}

// PatchNodeClaim merge-patches metadata/spec (patch is a JSON merge patch).
func (c *Cluster) PatchNodeClaim(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// PatchNodePool merge-patches a NodePool's metadata (its hash annotations).
func (c *Cluster) PatchNodePool(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.NodePoolGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// PatchNodePoolStatus merge-patches a NodePool's status subresource.
func (c *Cluster) PatchNodePoolStatus(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.NodePoolGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// PatchNodeClaimStatus merge-patches the status subresource.
func (c *Cluster) PatchNodeClaimStatus(ctx context.Context, name string, patch []byte) error {
	_, err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// DeleteNodeClaim removes a NodeClaim: Joinery's termination finalizer is
// taken off first (others' are kept), then the object deleted; a missing
// one is not an error.
func (c *Cluster) DeleteNodeClaim(ctx context.Context, name string) error {
	if err := c.RemoveNodeClaimFinalizer(ctx, name); err != nil {
		return err
	}
	err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Delete(ctx, name, metav1.DeleteOptions{})
	if errors.IsNotFound(err) {
		return nil
	}
	return err
}

// RemoveNodeClaimFinalizer takes karpenter.sh/termination off a NodeClaim
// (a merge patch carrying the resourceVersion, so a concurrent change of
// the list is not lost: retried on conflict). Missing object: no error.
func (c *Cluster) RemoveNodeClaimFinalizer(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := c.Dynamic.Resource(apiv1.NodeClaimGVR).Get(ctx, name, metav1.GetOptions{})
		if errors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		patch, ok := finalizerPatch(u.GetFinalizers(), u.GetResourceVersion())
		if !ok {
			return nil
		}
		_, err = c.Dynamic.Resource(apiv1.NodeClaimGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if errors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// DeleteNode removes a Node the same way: Joinery's finalizer off, then delete.
func (c *Cluster) DeleteNode(ctx context.Context, name string) error {
	if err := c.RemoveNodeFinalizer(ctx, name); err != nil {
		return err
	}
	err := c.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if errors.IsNotFound(err) {
		return nil
	}
	return err
}

// RemoveNodeFinalizer takes karpenter.sh/termination off a Node (see
// RemoveNodeClaimFinalizer).
func (c *Cluster) RemoveNodeFinalizer(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if errors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		patch, ok := finalizerPatch(n.Finalizers, n.ResourceVersion)
		if !ok {
			return nil
		}
		_, err = c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if errors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// finalizerPatch is the merge patch that drops Joinery's finalizer from
// fins under optimistic locking (false: it is not there).
func finalizerPatch(fins []string, resourceVersion string) ([]byte, bool) {
	kept := []string{}
	found := false
	for _, f := range fins {
		if f == apiv1.FinalizerTermination {
			found = true
			continue
		}
		kept = append(kept, f)
	}
	if !found {
		return nil, false
	}
	b, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"finalizers": kept, "resourceVersion": resourceVersion}})
	return b, true
}

// NodeClaimState reports from the informer cache whether a NodeClaim
// exists and whether it is being deleted (no conversion: cheap enough to
// call several times a second).
func (c *Cluster) NodeClaimState(name string) (exists, deleting bool) {
	o, ok, _ := c.nodeClaims.GetStore().GetByKey(name)
	if !ok {
		return false, false
	}
	u, isU := o.(*unstructured.Unstructured)
	return true, isU && u.GetDeletionTimestamp() != nil
}

// OnNodePoolChange calls fn whenever a NodePool is added or updated.
func (c *Cluster) OnNodePoolChange(fn func(obj interface{})) {
	_, _ = c.nodePools.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    fn,
		UpdateFunc: func(_, n interface{}) { fn(n) },
	})
}
