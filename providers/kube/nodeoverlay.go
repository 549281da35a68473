package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/joinery/joinery/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// WatchNodeOverlays adds the NodeOverlay informer (call it before Start):
// only a worker with --feature-gates NodeOverlay=true reads them.
func (c *Cluster) WatchNodeOverlays() error {
	c.nodeOverlays = c.dynFactory.ForResource(v1alpha1.NodeOverlayGVR).Informer()
	return c.nodeOverlays.SetTransform(stripManagedFields)
}

// NodeOverlays are the cached NodeOverlays by name (nil without
// WatchNodeOverlays); one that does not decode is left out and named in bad.
func (c *Cluster) NodeOverlays() (out []*v1alpha1.NodeOverlay, bad []string) {
	if c.nodeOverlays == nil {
		return nil, nil
	}
	for _, o := range c.nodeOverlays.GetStore().List() {
		ov := &v1alpha1.NodeOverlay{}
		if err := fromUnstructured(o, ov); err != nil {
			if u, ok := o.(*unstructured.Unstructured); ok {
				bad = append(bad, fmt.Sprintf("NodeOverlay %s: cannot decode: %v", u.GetName(), err))
			}
			continue
		}
		if ov.DeletionTimestamp == nil {
			out = append(out, ov)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Strings(bad)
	return out, bad
}

// CountNodeOverlays lists NodeOverlays once, for a worker that does not
// watch them to say they are ignored (0 when the CRD is not installed).
func (c *Cluster) CountNodeOverlays(ctx context.Context) int {
	l, err := c.Dynamic.Resource(v1alpha1.NodeOverlayGVR).List(ctx, metav1.ListOptions{Limit: 100})
	if err != nil {
		return 0
	}
	return len(l.Items)
}

// SetNodeOverlayConditions patches a NodeOverlay's status conditions.
func (c *Cluster) SetNodeOverlayConditions(ctx context.Context, name string, conds []metav1.Condition) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	_, err = c.Dynamic.Resource(v1alpha1.NodeOverlayGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
