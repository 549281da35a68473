// Package pending is the policy of pending pods: which ones Joinery finds
// nodes for, and which pod updates extend a provisioning batch. It does
// no I/O: the controller's watcher calls it on informer events.
package pending

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Provisionable reports whether a pod is one Joinery should find a node
// for: not bound, not terminating, and marked Unschedulable by the
// kube-scheduler (as Karpenter requires). As in Karpenter and Cluster
// Autoscaler, a DaemonSet's pod or a mirror pod (owned by its Node) is
// never one: it belongs to one node, which a new node cannot be, and the
// DaemonSets' pods are planned on every new node as its overhead.
func Provisionable(p *corev1.Pod) bool {
	if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || ownedByNodeOrDaemonSet(p) {
		return false
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// NewlyProvisionable reports whether an update made a pod provisionable
// (the kube-scheduler marked it Unschedulable); old is nil when the pod is
// first seen. Such updates extend the batch, up to its maximum. The
// scheduler's later re-marks of pods it already found unschedulable do
// not: while new nodes register it retries them continuously, so
// extending on those would hold every batch to its maximum; the
// provisioner's resync tick picks such pods up instead.
func NewlyProvisionable(old, pod *corev1.Pod) bool {
	return pod != nil && Provisionable(pod) && (old == nil || !Provisionable(old))
}

// ownedByNodeOrDaemonSet says whether a DaemonSet or a Node (a mirror pod)
// controls the pod.
func ownedByNodeOrDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && strings.HasPrefix(o.APIVersion, "apps/") || o.Kind == "Node" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}
