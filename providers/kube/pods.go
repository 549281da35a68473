package kube

import (
	"sort"

	"github.com/joinery/joinery/api/provreq"
	"github.com/joinery/joinery/policy/pending"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// IsProvisionable reports whether a pod is one Joinery should find a node
// for (pending.Provisionable: unbound, not terminating, marked
// Unschedulable by the kube-scheduler).
func IsProvisionable(p *corev1.Pod) bool {
	return pending.Provisionable(p)
}

// IsActive reports whether a bound pod still uses its node's resources.
func IsActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// ProvisionablePods lists pending unschedulable pods, sorted by
// namespace/name. With WatchProvisioningRequests, pods that consume a
// ProvisioningRequest are left out: their capacity comes from the request's
// all-or-nothing provisioning, not from pod-by-pod provisioning (as in
// Cluster Autoscaler).
func (c *Cluster) ProvisionablePods() []*corev1.Pod {
	all, _ := c.Pods.List(labels.Everything())
	var out []*corev1.Pod
	for _, p := range all {
		if c.provReqs != nil && provreq.ConsumedRequest(p.Annotations) != "" {
			continue
		}
		if IsProvisionable(p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// IsDaemonSetPod reports whether a DaemonSet owns the pod.
func IsDaemonSetPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// DaemonPodTarget is the node a pending DaemonSet pod was made for: the
// DaemonSet controller pins each pod with a required node affinity term
// matching metadata.name to one node ("" when the pod is not such a pod).
func DaemonPodTarget(p *corev1.Pod) string {
	if p.Spec.NodeName != "" || !IsDaemonSetPod(p) || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return ""
	}
	req := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil || len(req.NodeSelectorTerms) != 1 {
		return ""
	}
	for _, f := range req.NodeSelectorTerms[0].MatchFields {
		if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
			return f.Values[0]
		}
	}
	return ""
}
