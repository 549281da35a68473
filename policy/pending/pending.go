// Package pending is the policy of pending pods: which ones Joinery finds
// nodes for, and which pod updates extend a provisioning batch. It does
// no I/O: the controller's watcher calls it on informer events.
package pending

import corev1 "k8s.io/api/core/v1"

// Provisionable reports whether a pod is one Joinery should find a node
// for: not bound, not terminating, and marked Unschedulable by the
// kube-scheduler (as Karpenter requires).
func Provisionable(p *corev1.Pod) bool {
	if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
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
