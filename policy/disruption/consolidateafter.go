package disruption

import (
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// consolidateAfter in Karpenter v1 (nodeclaim/disruption/consolidation.go,
// utils/disruption.IsUnderConsolidateAfter, nodeclaim/podevents): a node is
// consolidatable once consolidateAfter has passed since its last pod event
// (NodeClaim status.lastPodEventTime), or since it was initialized if that
// is later or there was no pod event yet. The pod-events controller
// (controller/podevents.go) writes the field and the Consolidatable
// condition; emptiness and consolidation read the same clock here.

// ConsolidateAfter is a NodePool's consolidateAfter (default 0s); false:
// Never (or unparsable, which validation refuses): no emptiness and no
// consolidation for the pool. A static NodePool (spec.replicas) is never
// consolidated, whatever its consolidateAfter says (Karpenter ignores
// consolidationPolicy and consolidateAfter there): false; drift still
// applies to it.
func ConsolidateAfter(pool *apiv1.NodePool) (time.Duration, bool) {
	if pool == nil || pool.IsStatic() {
		return 0, false
	}
	d, err := apiv1.ParseNillableDuration(orDefault(pool.Spec.Disruption.ConsolidateAfter, "0s"))
	if err != nil || d == nil {
		return 0, false
	}
	return *d, true
}

// LastPodEvent is a NodeClaim's status.lastPodEventTime (zero: none).
func LastPodEvent(nc *apiv1.NodeClaim) time.Time {
	if nc.Status.LastPodEventTime == nil {
		return time.Time{}
	}
	return nc.Status.LastPodEventTime.Time
}

// ConsolidationClock is when a NodeClaim's consolidateAfter window
// started: the later of its last pod event and its initialization (zero:
// not initialized).
func ConsolidationClock(nc *apiv1.NodeClaim) time.Time {
	init := InitializedAt(nc)
	if init.IsZero() {
		return time.Time{}
	}
	if last := LastPodEvent(nc); last.After(init) {
		return last
	}
	return init
}

// ConsolidatableAt is when a NodeClaim becomes consolidatable:
// ConsolidationClock plus its pool's consolidateAfter. false: never (not
// initialized, no pool, or consolidateAfter Never).
func ConsolidatableAt(nc *apiv1.NodeClaim, pool *apiv1.NodePool) (time.Time, bool) {
	after, ok := ConsolidateAfter(pool)
	if !ok {
		return time.Time{}, false
	}
	clock := ConsolidationClock(nc)
	if clock.IsZero() {
		return time.Time{}, false
	}
	return clock.Add(after), true
}

// IsConsolidatable reports whether the NodeClaim is consolidatable at now
// (the Consolidatable condition's verdict).
func IsConsolidatable(nc *apiv1.NodeClaim, pool *apiv1.NodePool, now time.Time) bool {
	at, ok := ConsolidatableAt(nc, pool)
	return ok && !now.Before(at)
}

// ConsolidatableState is what the Consolidatable condition should say at
// now: True, or absent (as Karpenter clears it), and when to look again
// (0: only on a change of the NodeClaim or its pool).
func ConsolidatableState(nc *apiv1.NodeClaim, pool *apiv1.NodePool, now time.Time) (consolidatable bool, requeue time.Duration) {
	at, ok := ConsolidatableAt(nc, pool)
	if !ok {
		return false, 0
	}
	if now.Before(at) {
		return false, at.Sub(now)
	}
	return true, 0
}

// PodEventDedupe is how long after a written lastPodEventTime further pod
// events of the node are held back (Karpenter's dedupeTimeout): at most
// one write per node per window, and shorter than the 15 s validation
// delay, so a decision made while events were held back is re-checked
// against them.
const PodEventDedupe = 10 * time.Second

// PodEvent says whether a pod change is a pod event of the node it names
// (Karpenter's podevents rules; DaemonSet pods never count): an update
// that binds the pod, or makes a bound pod terminal (Succeeded, Failed)
// or terminating (deletionTimestamp set). old nil: the pod was created
// (it counts if created bound); pod nil: it was deleted (it counts if it
// was bound and not already terminal or terminating, e.g. a forced
// delete, whose terminating update may never be seen).
func PodEvent(old, pod *corev1.Pod) (node string, ok bool) {
	switch {
	case pod == nil && old == nil:
		return "", false
	case pod == nil:
		if old.Spec.NodeName == "" || daemonSetPod(old) || terminal(old) || old.DeletionTimestamp != nil {
			return "", false
		}
		return old.Spec.NodeName, true
	case pod.Spec.NodeName == "" || daemonSetPod(pod):
		return "", false
	case old == nil:
		return pod.Spec.NodeName, true
	}
	bound := old.Spec.NodeName == ""
	becameTerminal := !terminal(old) && terminal(pod)
	becameTerminating := old.DeletionTimestamp == nil && pod.DeletionTimestamp != nil
	return pod.Spec.NodeName, bound || becameTerminal || becameTerminating
}

// PodEventTime is the time of a bound pod's last pod event as the pod
// itself records it (zero: none recorded): when it was scheduled (its
// PodScheduled condition), when its deletion was asked for
// (deletionTimestamp less its grace period), when it finished (its
// containers' finish times, else its Ready condition). A newly elected
// leader catches up with the events no controller saw from these.
func PodEventTime(p *corev1.Pod) time.Time {
	if p.Spec.NodeName == "" || daemonSetPod(p) {
		return time.Time{}
	}
	var t time.Time
	later := func(u time.Time) {
		if u.After(t) {
			t = u
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			later(c.LastTransitionTime.Time)
		}
	}
	if p.DeletionTimestamp != nil {
		asked := p.DeletionTimestamp.Time
		if p.DeletionGracePeriodSeconds != nil {
			asked = asked.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		}
		later(asked)
	}
	if terminal(p) {
		finished := time.Time{}
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if tm := cs.State.Terminated; tm != nil && tm.FinishedAt.After(finished) {
				finished = tm.FinishedAt.Time
			}
		}
		if finished.IsZero() {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					finished = c.LastTransitionTime.Time
				}
			}
		}
		later(finished)
	}
	return t
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func daemonSetPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// ConsolidateAfterRecheck is the validation of an emptiness or
// consolidation decision against the consolidateAfter clock at now: why a
// node of it is no longer consolidatable (a pod event since the decision
// restarted its window), "" when every node still is. Drift and
// expiration do not wait for consolidateAfter; nodes that are no longer
// candidates are left to Recheck.
func ConsolidateAfterRecheck(d saga.DisruptionDecision, cands []Candidate, now time.Time) string {
	switch d.Method {
	case saga.MethodEmptiness, saga.MethodMultiNode, saga.MethodSingleNode:
	default:
		return ""
	}
	byName := candidatesByNode(cands)
	for _, n := range d.Nodes {
		c, ok := byName[n]
		if !ok {
			continue
		}
		at, ok := ConsolidatableAt(c.Claim, c.Pool)
		switch {
		case !ok:
			return "node " + n + " is no longer consolidatable (its NodePool's consolidateAfter is Never)"
		case now.Before(at):
			return fmt.Sprintf("node %s had a pod event at %s: consolidatable again at %s", n,
				LastPodEvent(c.Claim).UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))
		}
	}
	return ""
}
