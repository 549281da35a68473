package cluster

import (
	"k8s.io/apimachinery/pkg/api/meta"
)

// stripManagedFields is the informers' transform: server-side-apply
// bookkeeping (metadata.managedFields, often the largest part of a pod
// object) is never read by Joinery, and dropping it before the object
// enters the cache keeps the worker's memory proportional to what it uses.
// Objects without metadata (deletion tombstones) pass through unchanged.
func stripManagedFields(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
