package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// trimForCache is the typed informers' transform: stripManagedFields, and
// the pod templates of ReplicaSets, StatefulSets and ReplicationControllers
// (of those Joinery reads only the selector, and a ReplicaSet is mostly its
// template). DaemonSets keep theirs: a new node runs their pods.
func trimForCache(obj interface{}) (interface{}, error) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.StatefulSet:
		o.Spec.Template, o.Spec.VolumeClaimTemplates = corev1.PodTemplateSpec{}, nil
	case *corev1.ReplicationController:
		o.Spec.Template = nil
	}
	return stripManagedFields(obj)
}

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
