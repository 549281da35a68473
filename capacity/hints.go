package capacity

import (
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
)

// Hint is a pending pod and the node its NodeClaim was launched for it on.
type Hint struct {
	Pod  *corev1.Pod
	Node string
}

// SchedulerHints are the pending pods to point at their nominated node
// (status.nominatedNodeName): each pod Of still nominates to a NodeClaim
// whose Node is initialized, Ready and untainted for the pod. The
// kube-scheduler tries a nominated node first and keeps the room of
// nominated pods from pods of equal or lower priority, so the pods of a
// wave land where the plan put them, rather than the first nodes to come
// Ready taking whichever pods the scheduler picks, leaving the rest to a
// new plan. A pod already nominated (the scheduler's preemption, or an
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
		if nc == nil || p.Status.NominatedNodeName != "" || !initialized(nc) {
			continue
		}
		node, err := n.cluster.Nodes.Get(nc.Status.NodeName)
		if err != nil || !lifecycle.Ready(node) || node.Spec.Unschedulable || !solver.Tolerated(node.Spec.Taints, p.Spec.Tolerations) {
			continue
		}
		out = append(out, Hint{Pod: p, Node: node.Name})
	}
	return out
}

func initialized(nc *apiv1.NodeClaim) bool {
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionInitialized {
			return c.Status == "True" && nc.Status.NodeName != ""
		}
	}
	return false
}
