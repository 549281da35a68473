package controller

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// podEvents keeps the consolidateAfter clock on the NodeClaims, as
// Karpenter's nodeclaim.podevents and nodeclaim.disruption controllers do:
// it writes status.lastPodEventTime when a pod is bound to a node, or a
// pod of it goes terminating or terminal (disruption.PodEvent), at most
// once per node per disruption.PodEventDedupe (events inside the window
// are written when it ends, with their own time), and keeps the
// Consolidatable condition (disruption.ConsolidatableState), requeueing
// each NodeClaim for the moment it becomes consolidatable. It acts only
// while leading (run); a new leader first catches up with the events
// recorded on the pods themselves (disruption.PodEventTime), so a leader
// change neither loses an event nor restarts every node's window.
type podEvents struct {
	cl      *kube.Cluster
	metrics *metrics.Metrics
	log     *zap.Logger
	now     func() time.Time
	term    atomic.Pointer[podEventsTerm] // nil: not leading
}

// podEventsTerm is one leadership term's queues and memory.
type podEventsTerm struct {
	writes workqueue.TypedDelayingInterface[string] // NodeClaims with unwritten pod events
	conds  workqueue.TypedDelayingInterface[string] // NodeClaims whose condition to reconcile
	mu     sync.Mutex
	// pending: the latest unwritten pod event of each NodeClaim; written:
	// the lastPodEventTime this term last wrote (the cache may lag).
	pending, written map[string]time.Time
}

func newPodEventsTerm() *podEventsTerm {
	return &podEventsTerm{
		writes:  workqueue.NewTypedDelayingQueue[string](),
		conds:   workqueue.NewTypedDelayingQueue[string](),
		pending: map[string]time.Time{}, written: map[string]time.Time{},
	}
}

// newPodEvents registers the informer handlers (they act only while run
// leads).
func newPodEvents(cl *kube.Cluster, m *metrics.Metrics, log *zap.Logger) *podEvents {
	p := &podEvents{cl: cl, metrics: m, log: log.Named("podevents"), now: time.Now}
	_, _ = cl.PodInformer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			if pod, ok := obj.(*corev1.Pod); ok && !initial {
				p.podChanged(nil, pod)
			}
		},
		UpdateFunc: func(o, n interface{}) {
			old, _ := o.(*corev1.Pod)
			pod, _ := n.(*corev1.Pod)
			if old != nil && pod != nil {
				p.podChanged(old, pod)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				p.podChanged(pod, nil)
			}
		},
	})
	cl.OnNodeClaimEvent(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { p.nodeClaimChanged(obj) },
		UpdateFunc: func(_, n interface{}) { p.nodeClaimChanged(n) },
	})
	cl.OnNodePoolChange(func(obj interface{}) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			p.poolChanged(u.GetName())
		}
	})
	return p
}

// run acts until ctx ends (the leadership term).
func (p *podEvents) run(ctx context.Context) {
	t := p.lead()
	defer p.term.CompareAndSwap(t, nil)
	go func() {
		<-ctx.Done()
		t.writes.ShutDown()
		t.conds.ShutDown()
	}()
	go p.work(t.writes, func(name string) time.Duration { return p.write(t, name) })
	p.work(t.conds, func(name string) time.Duration { return p.reconcile(t, name) })
}

// lead starts a term: the catch-up from the pods' own records, and every
// NodeClaim's condition queued.
func (p *podEvents) lead() *podEventsTerm {
	t := newPodEventsTerm()
	p.term.Store(t)
	latest := map[string]time.Time{} // node -> latest pod event the pods record
	for _, o := range p.cl.PodInformer.GetStore().List() {
		if pod, ok := o.(*corev1.Pod); ok {
			if at := disruption.PodEventTime(pod); at.After(latest[pod.Spec.NodeName]) {
				latest[pod.Spec.NodeName] = at
			}
		}
	}
	for _, nc := range p.cl.NodeClaims() {
		if at := latest[nc.Status.NodeName]; nc.Status.NodeName != "" && at.After(disruption.LastPodEvent(nc)) {
			p.record(t, nc.Name, at)
		}
		t.conds.Add(nc.Name)
	}
	return t
}

func (p *podEvents) work(q workqueue.TypedDelayingInterface[string], fn func(string) time.Duration) {
	for {
		name, shutdown := q.Get()
		if shutdown {
			return
		}
		if after := fn(name); after > 0 {
			q.AddAfter(name, after)
		}
		q.Done(name)
	}
}

// podChanged records a pod event (disruption.PodEvent) for the NodeClaim
// of the pod's node.
func (p *podEvents) podChanged(old, pod *corev1.Pod) {
	t := p.term.Load()
	if t == nil {
		return
	}
	node, ok := disruption.PodEvent(old, pod)
	if !ok {
		return
	}
	if name := p.cl.NodeClaimOfNode(node); name != "" {
		p.record(t, name, p.now())
	}
}

func (p *podEvents) record(t *podEventsTerm, claim string, at time.Time) {
	t.mu.Lock()
	if at.After(t.pending[claim]) {
		t.pending[claim] = at
	}
	t.mu.Unlock()
	t.writes.Add(claim)
}

func (p *podEvents) nodeClaimChanged(obj interface{}) {
	if t := p.term.Load(); t != nil {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			t.conds.Add(u.GetName())
		}
	}
}

func (p *podEvents) poolChanged(pool string) {
	t := p.term.Load()
	if t == nil {
		return
	}
	for _, nc := range p.cl.NodeClaims() {
		if nc.Labels[apiv1.LabelNodePool] == pool {
			t.conds.Add(nc.Name)
		}
	}
}

// stored is the NodeClaim's lastPodEventTime as this term knows it: the
// cached one, or the one it wrote if the cache has not caught up.
func (t *podEventsTerm) stored(nc *apiv1.NodeClaim) time.Time {
	s := disruption.LastPodEvent(nc)
	if w := t.written[nc.Name]; w.After(s) {
		s = w
	}
	return s
}

// write writes the NodeClaim's pending pod event, unless one was written
// less than PodEventDedupe ago: then it says when to try again.
func (p *podEvents) write(t *podEventsTerm, name string) time.Duration {
	nc := p.cl.CachedNodeClaim(name)
	t.mu.Lock()
	at, ok := t.pending[name]
	var stored time.Time
	if ok && nc != nil {
		stored = t.stored(nc)
	}
	if ok && (nc == nil || nc.DeletionTimestamp != nil || !at.After(stored)) {
		delete(t.pending, name)
		ok = false
	}
	t.mu.Unlock()
	if !ok {
		return 0
	}
	now := p.now()
	if !stored.IsZero() && now.Sub(stored) < disruption.PodEventDedupe {
		return stored.Add(disruption.PodEventDedupe).Sub(now)
	}
	// A metav1.Time holds whole seconds: rounded up, the stored clock
	// never starts before the event.
	val := ceilSecond(at)
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"lastPodEventTime": val.UTC().Format(time.RFC3339)}})
	if err := p.cl.PatchNodeClaimStatus(context.Background(), name, patch); err != nil {
		if apierrors.IsNotFound(err) {
			t.mu.Lock()
			delete(t.pending, name)
			t.mu.Unlock()
			return 0
		}
		p.log.Debug("lastPodEventTime not written", zap.String("nodeclaim", name), zap.Error(err))
		return time.Second
	}
	p.metrics.PodEventWritten()
	t.mu.Lock()
	t.written[name] = val
	later := t.pending[name].After(at) // an event while writing: the next window takes it
	if !later {
		delete(t.pending, name)
	}
	t.mu.Unlock()
	t.conds.Add(name)
	if later {
		return disruption.PodEventDedupe
	}
	return 0
}

// reconcile makes the NodeClaim's Consolidatable condition say what
// disruption.ConsolidatableState says now (and drops the Empty condition
// earlier versions kept), and says when to look again.
func (p *podEvents) reconcile(t *podEventsTerm, name string) time.Duration {
	nc := p.cl.CachedNodeClaim(name)
	if nc == nil || nc.DeletionTimestamp != nil {
		return 0
	}
	pool, ok := p.cl.ValidNodePool(nc.Labels[apiv1.LabelNodePool])
	if !ok {
		pool = nil
	}
	t.mu.Lock()
	clock := t.stored(nc)
	t.mu.Unlock()
	eff := *nc
	if !clock.IsZero() {
		eff.Status.LastPodEventTime = &metav1.Time{Time: clock}
	}
	now := p.now()
	want, requeue := disruption.ConsolidatableState(&eff, pool, now)
	conds, changed := consolidatableCondition(nc.Status.Conditions, want, metav1.NewTime(now))
	if !changed {
		return requeue
	}
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": nc.ResourceVersion},
		"status":   map[string]any{"conditions": conds},
	})
	if err := p.cl.PatchNodeClaimStatus(context.Background(), name, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return 0
		}
		// A conflict: the update that caused it queues the claim again.
		p.log.Debug("consolidatable condition", zap.String("nodeclaim", name), zap.Error(err))
		return max(requeue, time.Second)
	}
	return requeue
}

// conditionEmpty is the emptiness clock earlier Joinery versions kept on
// NodeClaims; consolidateAfter now counts from lastPodEventTime.
const conditionEmpty = "Empty"

// consolidatableCondition returns conds with Consolidatable True (want) or
// absent, without the old Empty condition, and whether that changed them.
func consolidatableCondition(conds []metav1.Condition, want bool, now metav1.Time) ([]metav1.Condition, bool) {
	out := slices.DeleteFunc(slices.Clone(conds), func(c metav1.Condition) bool {
		return c.Type == conditionEmpty || (!want && c.Type == apiv1.ConditionConsolidatable)
	})
	if want && !apiv1.IsConditionTrue(conds, apiv1.ConditionConsolidatable) {
		out = apiv1.SetCondition(out, metav1.Condition{Type: apiv1.ConditionConsolidatable, Status: metav1.ConditionTrue,
			Reason: apiv1.ConditionConsolidatable}, now)
	}
	return out, len(out) != len(conds) || (want && !apiv1.IsConditionTrue(conds, apiv1.ConditionConsolidatable))
}

// ceilSecond rounds t up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}
