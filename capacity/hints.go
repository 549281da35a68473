package capacity

import (
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Hint is a pending pod and the node its NodeClaim was launched for it on.
type Hint struct {
	Pod  *corev1.Pod
	Node string
}

// SchedulerHints are the pending pods to point at their nominated node
// (status.nominatedNodeName): each pod Of still nominates to a NodeClaim
// whose Node is Ready and untainted for the pod (Of holds a nomination to
// a Ready node only while the pod fits its free allocatable). It does not
// wait for the claim's initialization: the scheduler tries the pods as
// soon as the Node is Ready. The kube-scheduler tries a nominated node
// first and keeps the room of nominated pods from pods of equal or lower
// priority, so the pods of a wave land where the plan put them, rather
// than the first nodes to come Ready taking whichever pods the scheduler
// picks, leaving the rest to a new plan. A pod already nominated (the scheduler's preemption, or an
// earlier hint) is left alone.
func (n *Nominations) SchedulerHints(pending []*corev1.Pod, now time.Time) []Hint {
	to := n.Of(pending, now)
	claims := map[string]*apiv1.NodeClaim{}
	for _, nc := range n.cluster.NodeClaims() {
		claims[nc.Name] = nc
	}
	var out []Hint
	for _, p := range pending {
		nc := claims[to[string(p.UID)]]
		if nc == nil || nc.Status.NodeName == "" || p.Status.NominatedNodeName != "" {
			continue
		}
		if !n.pointable(nc.Status.NodeName, p) {
			continue
		}
		out = append(out, Hint{Pod: p, Node: nc.Status.NodeName})
	}
	return out
}
