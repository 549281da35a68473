// Package lifecycle is the pure policy of a node's registration and
// initialization, as Karpenter v1 defines them: what a Node must carry
// once it has joined for a NodeClaim (labels, annotations, taints, owner
// reference, termination finalizer), and when it counts as initialized.
// No I/O: activities read the objects, call these and write the result.
package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InternalPrefix marks Joinery's own bookkeeping annotations on NodeClaims
// (the nominated pods, a list that changes as pods are placed): they are not
// copied to the Node. Labels are all copied, as Karpenter copies them.
const InternalPrefix = "joinery.sh/"

// knownEphemeralTaints are put on a Node by the kubelet or the cloud
// controller until it is usable; a node is not initialized while one is
// there (Karpenter's KnownEphemeralTaints).
var knownEphemeralTaints = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node.cloudprovider.kubernetes.io/uninitialized", Effect: corev1.TaintEffectNoSchedule},
}

// SyncNode makes node agree with its NodeClaim at registration, keeping
// what the kubelet set: it adds the termination finalizer and an owner
// reference to the NodeClaim, every NodeClaim label and its annotations
// except Joinery's internal ones (overriding the kubelet's value for the
// same key), karpenter.sh/registered=true, and, the first time only
// (no registered label yet) and unless the node is labelled
// karpenter.sh/do-not-sync-taints=true, the NodeClaim's taints and startup
// taints; startup taints then belong to whoever removes them. It always
// removes the karpenter.sh/unregistered taint. It reports whether node changed.
func SyncNode(node *corev1.Node, nc *apiv1.NodeClaim) bool {
	changed := false
	if !hasString(node.Finalizers, apiv1.FinalizerTermination) {
		node.Finalizers = append(node.Finalizers, apiv1.FinalizerTermination)
		changed = true
	}
	if !ownedBy(node.OwnerReferences, nc) {
		yes := true
		node.OwnerReferences = append(node.OwnerReferences, metav1.OwnerReference{
			APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: nc.Name, UID: nc.UID, BlockOwnerDeletion: &yes,
		})
		changed = true
	}
	_, registered := node.Labels[apiv1.LabelNodeRegistered]
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range nc.Labels {
		if node.Labels[k] != v {
			node.Labels[k], changed = v, true
		}
	}
	if node.Labels[apiv1.LabelNodeRegistered] != "true" {
		node.Labels[apiv1.LabelNodeRegistered], changed = "true", true
	}
	for k, v := range nc.Annotations {
		if strings.HasPrefix(k, InternalPrefix) {
			continue
		}
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		if old, ok := node.Annotations[k]; !ok || old != v {
			node.Annotations[k], changed = v, true
		}
	}
	if !registered && node.Labels[apiv1.LabelDoNotSyncTaints] != "true" {
		for _, t := range append(append([]corev1.Taint(nil), nc.Spec.Taints...), nc.Spec.StartupTaints...) {
			if !HasTaint(node.Spec.Taints, t) {
				node.Spec.Taints = append(node.Spec.Taints, t)
				changed = true
			}
		}
	}
	kept := node.Spec.Taints[:0:0]
	for _, t := range node.Spec.Taints {
		if t.Key == apiv1.TaintKeyUnregistered {
			changed = true
			continue
		}
		kept = append(kept, t)
	}
	node.Spec.Taints = kept
	return changed
}

// OpeningTaint is put on a node launched for pending pods at registration
// (HoldOpening) and removed once they are pointed at it.
var OpeningTaint = corev1.Taint{Key: apiv1.TaintKeyOpening, Effect: corev1.TaintEffectNoSchedule}

// OpeningDeadline bounds how long a Ready node stays closed by
// OpeningTaint: past it, the node's own NodeClaim workflow opens it.
const OpeningDeadline = time.Minute

// HoldOpening adds OpeningTaint to a Node registering (SyncNode has not
// labelled it registered yet), so that no pod lands there before the
// pods it was launched for are pointed at it. It reports whether node
// changed.
func HoldOpening(node *corev1.Node) bool {
	if node.Labels[apiv1.LabelNodeRegistered] == "true" || HasTaint(node.Spec.Taints, OpeningTaint) {
		return false
	}
	node.Spec.Taints = append(node.Spec.Taints, OpeningTaint)
	return true
}

// Opening says whether the node still waits for its pods to be pointed at
// it (OpeningTaint).
func Opening(node *corev1.Node) bool { return HasTaint(node.Spec.Taints, OpeningTaint) }

// EndOpening removes OpeningTaint; it reports whether node changed.
func EndOpening(node *corev1.Node) bool {
	kept := WithoutOpening(node.Spec.Taints)
	if len(kept) == len(node.Spec.Taints) {
		return false
	}
	node.Spec.Taints = kept
	return true
}

// WithoutOpening is taints without OpeningTaint (a new slice if it was
// there): the taints a node keeps once open.
func WithoutOpening(taints []corev1.Taint) []corev1.Taint {
	if !HasTaint(taints, OpeningTaint) {
		return taints
	}
	return slices.DeleteFunc(slices.Clone(taints), func(t corev1.Taint) bool { return t.MatchTaint(&OpeningTaint) })
}

// Initialized reports whether a registered node is initialized for its
// NodeClaim: Ready, none of the NodeClaim's startup taints, the
// unregistered or opening taint or a known ephemeral taint left, and every resource
// the NodeClaim requested (spec.resources.requests: its pods' requests,
// e.g. nvidia.com/gpu) non-zero in the node's allocatable, which a device
// plugin fills in after the kubelet starts. When it is not, reason and
// message are those of the Initialized condition (status Unknown).
func Initialized(node *corev1.Node, nc *apiv1.NodeClaim) (ok bool, reason, message string) {
	if !Ready(node) {
		return false, apiv1.ReasonNodeNotReady, "Node status is NotReady"
	}
	for _, st := range nc.Spec.StartupTaints {
		if HasTaint(node.Spec.Taints, st) {
			return false, apiv1.ReasonStartupTaintsExist, fmt.Sprintf("StartupTaint %q still exists", formatTaint(st))
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == apiv1.TaintKeyUnregistered || t.MatchTaint(&OpeningTaint) {
			return false, apiv1.ReasonStartupTaintsExist, fmt.Sprintf("Taint %q still exists", formatTaint(t))
		}
		for _, e := range knownEphemeralTaints {
			if t.Key == e.Key && t.Effect == e.Effect {
				return false, apiv1.ReasonEphemeralTaintsExist, fmt.Sprintf("KnownEphemeralTaint %q still exists", formatTaint(t))
			}
		}
	}
	for _, name := range sortedNames(nc.Spec.Resources.Requests) {
		q := nc.Spec.Resources.Requests[name]
		if q.IsZero() {
			continue
		}
		if a, ok := node.Status.Allocatable[name]; !ok || a.IsZero() {
			return false, apiv1.ReasonResourceNotRegistered, fmt.Sprintf("Resource %q was requested but not registered", name)
		}
	}
	return true, apiv1.ReasonInitialized, ""
}

// Ready reports whether the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ReadySince is when the node's Ready condition last changed (zero: it
// has none).
func ReadySince(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// HasTaint reports whether ts holds a taint with t's key and effect (the
// value is not compared, as corev1.Taint.MatchTaint).
func HasTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for i := range ts {
		if ts[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

func hasString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func ownedBy(refs []metav1.OwnerReference, nc *apiv1.NodeClaim) bool {
	for _, r := range refs {
		if r.Kind == "NodeClaim" && r.Name == nc.Name && (r.UID == nc.UID || nc.UID == "") {
			return true
		}
	}
	return false
}

func formatTaint(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(rl))
	for k := range rl {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
