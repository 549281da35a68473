package controller

import (
	"context"
	"sync"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// hintsPerPass bounds one pass's writes, so that the nodes that register
// while a burst's pointers are written wait for a few hundred pointers
// rather than thousands (a pass takes the hints of the nodes that open
// first; the next pass starts at once).
const hintsPerPass = 256

// schedulerHints points pending pods at the node their NodeClaim was
// launched for (capacity.Nominations.SchedulerHints), leader only: when a
// Node turns Ready or loses a taint, and every `every`. A pod is pointed at a node
// once: when the kube-scheduler clears the hint (the pod no longer fits
// there), it stands, and the pod is planned again once its nomination
// lapses.
type schedulerHints struct {
	cl      *kube.Cluster
	noms    *capacity.Nominations
	log     *zap.Logger
	every   time.Duration
	trigger chan struct{}
	mu      sync.Mutex
	done    map[types.UID]string // pod -> the node it was pointed at
	perPass int                  // hintsPerPass
}

func newSchedulerHints(cl *kube.Cluster, noms *capacity.Nominations, log *zap.Logger) *schedulerHints {
	h := &schedulerHints{cl: cl, noms: noms, log: log.Named("scheduler-hints"), every: 5 * time.Second, perPass: hintsPerPass,
		trigger: make(chan struct{}, 1), done: map[types.UID]string{}}
	// New hints come when a Node turns Ready or loses a taint; the
	// resync catches the rest.
	cl.OnNodeEvent(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(o, n interface{}) {
			if nodeOpened(o, n) {
				h.poke()
			}
		},
	})
	return h
}

func (h *schedulerHints) poke() {
	select {
	case h.trigger <- struct{}{}:
	default:
	}
}

// hintSettle gathers the nodes that turn Ready within a second into one
// pass: each pass reads every pending pod's nomination, and in a burst of
// thousands the nodes open several a second. A pod that the scheduler
// reaches within that second needs no pointer: its node has its room.
const hintSettle = time.Second

// run passes until ctx ends; a burst of events makes one pass.
func (h *schedulerHints) run(ctx context.Context) {
	reconcileLoop(ctx, h.every, h.trigger, hintSettle, h.pass)
}

// pass writes the hints not written yet.
func (h *schedulerHints) pass(ctx context.Context, now time.Time) {
	pending := h.cl.ProvisionablePods()
	hints := h.noms.SchedulerHints(pending, now)
	h.mu.Lock()
	h.forgetGone(pending)
	var todo []capacity.Hint
	for _, hint := range hints {
		if h.done[hint.Pod.UID] != hint.Node {
			todo = append(todo, hint)
		}
	}
	h.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	if len(todo) > h.perPass {
		todo = todo[:h.perPass]
		defer h.poke()
	}
	written := 0
	capacity.WriteHints(ctx, h.cl, todo, func(hint capacity.Hint, err error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		switch {
		case err == nil:
			h.done[hint.Pod.UID] = hint.Node
			written++
		case capacity.PointerMoot(err):
		default:
			h.log.Warn("pod not pointed at its node", zap.String("pod", hint.Pod.Namespace+"/"+hint.Pod.Name),
				zap.String("node", hint.Node), zap.Error(err))
		}
	})
	if written > 0 {
		h.log.Info("pending pods pointed at the nodes launched for them", zap.Int("pods", written))
	}
}

// forgetGone drops the pods no longer pending (bound, or deleted).
func (h *schedulerHints) forgetGone(pending []*corev1.Pod) {
	if len(h.done) == 0 {
		return
	}
	still := make(map[types.UID]bool, len(pending))
	for _, p := range pending {
		still[p.UID] = true
	}
	for uid := range h.done {
		if !still[uid] {
			delete(h.done, uid)
		}
	}
}

// nodeOpened says whether a Node update may let pending pods onto it:
// it turned Ready, or lost a taint while Ready.
func nodeOpened(o, n interface{}) bool {
	old, _ := o.(*corev1.Node)
	node, _ := n.(*corev1.Node)
	if old == nil || node == nil || !lifecycle.Ready(node) {
		return false
	}
	return !lifecycle.Ready(old) || len(node.Spec.Taints) < len(old.Spec.Taints)
}
