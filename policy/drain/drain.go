// Package drain holds the rules of draining a node (Karpenter's
// termination order): which pods a drain waits for, the tier each is
// evicted in, and when one still there is deleted instead. Pure: the
// caller evicts, and gives the clock.
package drain

import (
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Tiers, evicted in order; each tier must be gone before the next.
const (
	TierNonCritical = iota + 1
	TierNonCriticalDaemon
	TierCritical
	TierCriticalDaemon
)

// Next is the drain's next step over the pods on a node: how many it
// still waits for, and the lowest tier present with its pods sorted by
// namespace/name (tier 0: nothing left to wait for).
func Next(pods []*corev1.Pod) (remaining, tier int, next []*corev1.Pod) {
	byTier := map[int][]*corev1.Pod{}
	for _, p := range pods {
		if !WaitedOn(p) {
			continue
		}
		byTier[Tier(p)] = append(byTier[Tier(p)], p)
		remaining++
	}
	for t := TierNonCritical; t <= TierCriticalDaemon; t++ {
		if len(byTier[t]) > 0 {
			next = byTier[t]
			sort.Slice(next, func(i, j int) bool { return Key(next[i]) < Key(next[j]) })
			return remaining, t, next
		}
	}
	return remaining, 0, nil
}

// ForceDeleteAt is deadline minus the pod's grace period: when a pod still
// there is deleted rather than evicted (zero: no deadline).
func ForceDeleteAt(p *corev1.Pod, deadline time.Time) time.Time {
	if deadline.IsZero() {
		return time.Time{}
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.Spec.TerminationGracePeriodSeconds
	}
	return deadline.Add(-time.Duration(grace) * time.Second)
}

// WaitedOn: the pods a drain waits for: not finished, not mirror pods, not
// tolerating the disrupted taint.
func WaitedOn(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, t := range p.Spec.Tolerations {
		keyOK := t.Key == apiv1.TaintKeyDisrupted || (t.Key == "" && t.Operator == corev1.TolerationOpExists)
		effectOK := t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule
		if keyOK && effectOK {
			return false
		}
	}
	return true
}

// Tier is the pod's drain tier: critical (system-cluster-critical,
// system-node-critical) after the rest, DaemonSet pods after the others
// of their criticality.
func Tier(p *corev1.Pod) int {
	critical := p.Spec.PriorityClassName == "system-cluster-critical" || p.Spec.PriorityClassName == "system-node-critical"
	daemon := false
	for _, o := range p.OwnerReferences {
		daemon = daemon || o.Kind == "DaemonSet"
	}
	switch {
	case critical && daemon:
		return TierCriticalDaemon
	case critical:
		return TierCritical
	case daemon:
		return TierNonCriticalDaemon
	}
	return TierNonCritical
}

// Key is namespace/name.
func Key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
