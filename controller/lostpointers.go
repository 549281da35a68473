package controller

import (
	"time"

	"github.com/joinery/joinery/policy/lifecycle"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// isLost says whether the pod's pointer was cleared while its node was closed.
func (h *schedulerHints) isLost(uid types.UID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.lost[uid]
	return ok
}

// lostOn counts the pods whose pointer to node was cleared while it was
// closed and is not written again (h.mu held).
func (h *schedulerHints) lostOn(node string) int {
	n := 0
	for _, on := range h.lost {
		if on == node {
			n++
		}
	}
	return n
}

// lostBeforeOpening says whether the scheduler cleared a pointer to the
// node while it was closed (pointerCleared) that is not written again
// yet: the node waits for the next pass to point that pod again, within
// openingHold of Ready (h.mu held).
func (h *schedulerHints) lostBeforeOpening(node string, now time.Time) bool {
	n, err := h.cl.Nodes.Get(node)
	if err != nil || now.Sub(lifecycle.ReadySince(n)) >= openingHold {
		return false
	}
	return h.lostOn(node) > 0
}

// lostPointerWindow: a pointer cleared this soon after its node opened
// was cleared, most likely, before it opened (the informer tells late).
const lostPointerWindow = 2 * time.Second

// pointerCleared points a pod again when the kube-scheduler cleared its
// pointer before the node opened: a pod already in its active queue
// (requeued by another node opening) is tried in the moment between its
// pointer and its node's opening, fails, and loses the pointer, and
// without it the node's room goes to the first pod the scheduler takes.
// A pointer cleared once the node is open stands (the pod does not fit
// there), but for one more try when the clear came within
// lostPointerWindow of the opening.
func (h *schedulerHints) pointerCleared(o, n interface{}) {
	old, _ := o.(*corev1.Pod)
	pod, _ := n.(*corev1.Pod)
	if old == nil || pod == nil || old.Status.NominatedNodeName == "" || pod.Status.NominatedNodeName != "" || pod.Spec.NodeName != "" {
		return
	}
	node := old.Status.NominatedNodeName
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done[pod.UID] != node {
		return
	}
	closed := false
	if nd, err := h.cl.Nodes.Get(node); err == nil {
		closed = lifecycle.Opening(nd)
	}
	at, opened := h.opened[node]
	if closed || (opened && time.Since(at) < lostPointerWindow && !h.repointed[pod.UID]) {
		delete(h.done, pod.UID)
		h.repointed[pod.UID] = true
		if closed {
			h.lost[pod.UID] = node
		}
		h.log.Info("pointer cleared as its node opened; pointing again", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("node", node), zap.Bool("closed", closed))
		h.poke()
	}
}
