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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
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
// lapses. A node launched for pods registers closed to the scheduler
// (lifecycle.HoldOpening) and is opened once they are pointed at it: were
// it open at Ready, the scheduler would fill it with the first pending
// pods it takes in the second before the pointers, leaving the pods it
// was launched for to buy nodes of their own.
type schedulerHints struct {
	cl      *kube.Cluster
	noms    *capacity.Nominations
	log     *zap.Logger
	every   time.Duration
	trigger chan struct{}
	mu      sync.Mutex
	done    map[types.UID]string // pod -> the node it was pointed at
	perPass int                  // hintsPerPass
	// opened is when this controller opened each node; repointed, the
	// pods pointed again after a pointer lost as their node opened; lost,
	// the pods whose pointer was cleared while their node was closed, by
	// node, until pointed again.
	opened    map[string]time.Time
	repointed map[types.UID]bool
	lost      map[types.UID]string
	// closed is when each Ready node still closed was first seen so, and
	// whether it was reported (reportClosed).
	closed map[string]closedNode
}

func newSchedulerHints(cl *kube.Cluster, noms *capacity.Nominations, log *zap.Logger) *schedulerHints {
	h := &schedulerHints{cl: cl, noms: noms, log: log.Named("scheduler-hints"), every: 5 * time.Second, perPass: hintsPerPass,
		trigger: make(chan struct{}, 1), done: map[types.UID]string{}, opened: map[string]time.Time{}, repointed: map[types.UID]bool{},
		lost: map[types.UID]string{}, closed: map[string]closedNode{}}
	if cl.PodInformer != nil {
		_, _ = cl.PodInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: h.pointerCleared})
	}
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

// openingHold bounds how long a Ready node stays closed for a pod it was
// launched for that cannot be pointed at it (a startup taint the pod does
// not tolerate stays): past it the node opens to every pod.
const openingHold = 30 * time.Second

// pass writes the hints not written yet, then opens the nodes launched
// for pods (lifecycle.OpeningTaint) whose hints are all written, together,
// once the pod cache shows the pointers (pointersSeen), then the nodes no
// hint waits for. Not one by one: a node opening sets off the scheduler's
// attempt of every pending pod, and a pod pointed at a node still closed
// fails it and loses its pointer. later holds the nodes left to the next
// pass or waiting for a nominee that cannot be pointed yet.
func (h *schedulerHints) pass(ctx context.Context, now time.Time) {
	idle := h.closedReady()
	todo, later := h.due(now)
	left := map[string]int{} // node -> hints of this pass not written
	for _, hint := range todo {
		left[hint.Node]++
	}
	var pointed []capacity.Hint
	start := time.Now()
	capacity.WriteHints(ctx, h.cl, todo, func(hint capacity.Hint, err error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		switch {
		case err == nil:
			h.done[hint.Pod.UID] = hint.Node
			delete(h.lost, hint.Pod.UID)
			pointed = append(pointed, hint)
			left[hint.Node]--
		case capacity.PointerMoot(err):
			left[hint.Node]--
		default:
			h.log.Warn("pod not pointed at its node", zap.String("pod", hint.Pod.Namespace+"/"+hint.Pod.Name),
				zap.String("node", hint.Node), zap.Error(err))
		}
	})
	h.pointersSeen(ctx, pointed)
	opened := h.openPointed(ctx, left, later, now)
	if len(pointed) > 0 {
		h.log.Info("pending pods pointed at the nodes launched for them", zap.Int("pods", len(pointed)),
			zap.Int("nodesOpened", opened), zap.Duration("took", time.Since(start)))
	}
	h.openIdle(ctx, idle, left, later)
	h.reportClosed(left, later, now)
}

// seenWithin bounds pointersSeen's wait for the pod cache.
const seenWithin = 3 * time.Second

// pointersSeen waits, within seenWithin, until the pod cache shows each
// written pointer (or the pod no longer pending, or the pointer cleared
// again): the kube-scheduler learns of them by its own watch of the same
// pods, and a node that opens before it has them is open to any pod.
func (h *schedulerHints) pointersSeen(ctx context.Context, pointed []capacity.Hint) {
	deadline := time.Now().Add(seenWithin)
	for _, hint := range pointed {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			p, err := h.cl.Pods.Pods(hint.Pod.Namespace).Get(hint.Pod.Name)
			if err != nil || p.UID != hint.Pod.UID || p.Spec.NodeName != "" || p.Status.NominatedNodeName == hint.Node || h.isLost(p.UID) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// openPointed opens, together, the nodes whose hints of this pass are all
// written (left 0), that are not left to a later pass and lost no pointer
// meanwhile; it returns how many it opened.
func (h *schedulerHints) openPointed(ctx context.Context, left map[string]int, later map[string]bool, now time.Time) int {
	var ready []string
	h.mu.Lock()
	for node, n := range left {
		if n == 0 && !later[node] && !h.lostBeforeOpening(node, now) {
			ready = append(ready, node)
		}
	}
	h.mu.Unlock()
	var opening sync.WaitGroup
	for _, node := range ready {
		opening.Go(func() { h.open(ctx, node) })
	}
	opening.Wait()
	return len(ready)
}

// due are the hints this pass writes (at most perPass, the nodes that
// opened first) and the nodes that stay closed after it (later): those of
// the hints left to the next pass, which it starts at once, and those
// whose nominee cannot be pointed yet, within openingHold of Ready.
// Without hints, none.
func (h *schedulerHints) due(now time.Time) (todo []capacity.Hint, later map[string]bool) {
	later = map[string]bool{}
	if !h.noms.Hinting() {
		return nil, later
	}
	pending := h.cl.ProvisionablePods()
	hints, blocked := h.noms.SchedulerHints(pending, now)
	for name := range blocked {
		if node, err := h.cl.Nodes.Get(name); err == nil && now.Sub(lifecycle.ReadySince(node)) < openingHold {
			later[name] = true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetGone(pending)
	for _, hint := range hints {
		if h.done[hint.Pod.UID] != hint.Node {
			todo = append(todo, hint)
		}
	}
	if len(todo) <= h.perPass {
		return todo, later
	}
	for _, hint := range todo[h.perPass:] {
		later[hint.Node] = true
	}
	h.poke()
	return todo[:h.perPass], later
}

// closedReady are the Ready nodes still closed, as the pass starts: the
// nodes openIdle may open.
func (h *schedulerHints) closedReady() map[string]bool {
	out := map[string]bool{}
	nodes, err := h.cl.Nodes.List(labels.Everything())
	if err != nil {
		return out
	}
	for _, n := range nodes {
		if lifecycle.Opening(n) && lifecycle.Ready(n) {
			out[n.Name] = true
		}
	}
	return out
}

// openIdle opens the nodes that were Ready and closed as the pass started
// (idle) that no hint of this pass went to (handled) and none waits for
// (later): their pods were pointed earlier, went elsewhere, or are not
// pointed (--scheduler-hints=false). A node that turned Ready during the
// pass waits for the next, which points its pods first.
func (h *schedulerHints) openIdle(ctx context.Context, idle map[string]bool, handled map[string]int, later map[string]bool) {
	for name := range idle {
		_, seen := handled[name]
		if n, err := h.cl.Nodes.Get(name); err == nil && !seen && !later[name] && lifecycle.Opening(n) {
			h.open(ctx, name)
		}
	}
}

// open removes the opening taint from a node.
func (h *schedulerHints) open(ctx context.Context, node string) {
	removed := false
	err := h.cl.UpdateNode(ctx, node, func(n *corev1.Node) bool { removed = lifecycle.EndOpening(n); return removed })
	if err != nil {
		if !apierrors.IsNotFound(err) {
			h.log.Warn("node not opened", zap.String("node", node), zap.Error(err))
		}
		return
	}
	if removed {
		h.mu.Lock()
		h.opened[node] = time.Now()
		h.mu.Unlock()
	}
}

// forgetGone drops the pods no longer pending (bound, or deleted), and
// the openings past lostPointerWindow.
func (h *schedulerHints) forgetGone(pending []*corev1.Pod) {
	if len(h.done)+len(h.repointed)+len(h.opened) == 0 {
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
	for uid := range h.repointed {
		if !still[uid] {
			delete(h.repointed, uid)
			delete(h.lost, uid)
		}
	}
	for node, at := range h.opened {
		if time.Since(at) > lostPointerWindow {
			delete(h.opened, node)
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
