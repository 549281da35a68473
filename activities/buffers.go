package activities

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/headroom"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// refTTL is how long a resolved podTemplateRef or scalableRef is reused
// (they are read with GETs, not watched).
const refTTL = 5 * time.Second

// buffers are the capacity buffers as a snapshot plans them (add): every
// CapacityBuffer (gate on) and every NodePool's joinery.sh/headroom, as
// virtual pods. Buffers' refs are read with a short cache (refTTL).
type buffers struct {
	cluster *kube.Cluster
	log     *zap.Logger
	events  *events // an undecodable CapacityBuffer is logged once
	gate    bool    // the CapacityBuffer feature gate

	mu   sync.Mutex
	refs map[string]refEntry
}

type refEntry struct {
	src  headroom.Source
	gen  int64
	name string
	err  error
	at   time.Time
}

// bufferView is one buffer as one snapshot planned it.
type bufferView struct {
	ns, name string
	obj      *capacitybuffer.CapacityBuffer // nil: a NodePool's joinery.sh/headroom
	pool     *apiv1.NodePool                // the annotated pool (obj nil)
	pods     []*corev1.Pod
	replicas int32
	chunk    resources.List
	reason   string // ReadyForProvisioning reason
	err      error  // why it is not planned (the field named)
	tmplName string
	tmplGen  int64
}

func (v *bufferView) key() string { return headroom.Key(v.ns, v.name) }

// resolveRef reads a buffer's podTemplateRef or scalableRef (cached refTTL).
func (bs *buffers) resolveRef(ctx context.Context, b *capacitybuffer.CapacityBuffer, now time.Time) refEntry {
	var k string
	if r := b.Spec.PodTemplateRef; r != nil {
		k = b.Namespace + "/PodTemplate/" + r.Name
	} else {
		k = b.Namespace + "/" + b.Spec.ScalableRef.Kind + "/" + b.Spec.ScalableRef.Name
	}
	bs.mu.Lock()
	e, ok := bs.refs[k]
	bs.mu.Unlock()
	if ok && now.Sub(e.at) < refTTL {
		return e
	}
	e = refEntry{at: now}
	if r := b.Spec.PodTemplateRef; r != nil {
		pt, err := bs.cluster.PodTemplate(ctx, b.Namespace, r.Name)
		if err == nil {
			e.src, e.gen, e.name = headroom.Source{Template: pt.Template}, pt.Generation, pt.Name
		}
		e.err = err
	} else {
		r := b.Spec.ScalableRef
		tmpl, n, err := bs.cluster.Scalable(ctx, b.Namespace, r.Kind, r.Name)
		e.src, e.err = headroom.Source{Template: tmpl, ScalableReplicas: n}, err
	}
	bs.mu.Lock()
	if bs.refs == nil {
		bs.refs = map[string]refEntry{}
	}
	bs.refs[k] = e
	bs.mu.Unlock()
	return e
}

// views are the buffers to plan for: every CapacityBuffer (gate
// on) with its virtual pods or why it has none, then every annotated
// NodePool's headroom.
func (bs *buffers) views(s *snapshot, now time.Time) []*bufferView {
	var out []*bufferView
	if bs.gate {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, bad := bs.cluster.CapacityBuffers()
		for _, why := range bad {
			if bs.events.first("capacitybuffer/decode/"+why, time.Hour, now) {
				bs.log.Warn("CapacityBuffer ignored", zap.String("why", why))
			}
		}
		for _, b := range list {
			out = append(out, bs.view(ctx, b, now))
		}
	}
	for _, name := range sortedPoolNames(s.pools) {
		np := s.pools[name]
		v, ok := np.Annotations[headroom.AnnotationPoolHeadroom]
		if !ok || np.IsStatic() {
			continue
		}
		view := &bufferView{ns: headroom.PoolBufferNamespace, name: np.Name, pool: np}
		pct, err := headroom.ParsePoolHeadroom(v)
		if err != nil {
			view.err = err
			out = append(out, view)
			continue
		}
		var reqs []resources.List
		for _, ep := range s.input.ExistingPods {
			if ep.Daemon || s.nodePool[ep.Node] != np.Name {
				continue
			}
			reqs = append(reqs, ep.Pod.Requests)
		}
		view.pods = headroom.PoolVirtualPods(np.Name, pct, reqs)
		view.replicas = int32(len(view.pods))
		if len(view.pods) > 0 {
			view.chunk = headroom.ChunkRequests(view.pods[0].Spec)
		}
		out = append(out, view)
	}
	return out
}

// view is one CapacityBuffer with its virtual pods, or why it has none.
func (bs *buffers) view(ctx context.Context, b *capacitybuffer.CapacityBuffer, now time.Time) *bufferView {
	v := &bufferView{ns: b.Namespace, name: b.Name, obj: b}
	if err := headroom.Validate(b); err != nil {
		v.err, v.reason = err, reasonResolutionFailed
		return v
	}
	e := bs.resolveRef(ctx, b, now)
	if e.err != nil {
		v.reason = reasonResolutionFailed
		field := "spec.scalableRef"
		if b.Spec.PodTemplateRef != nil {
			field = "spec.podTemplateRef"
		}
		if apierrors.IsNotFound(e.err) {
			v.reason = map[string]string{"spec.podTemplateRef": reasonPodTemplateNotFound, "spec.scalableRef": reasonScalableRefNotFound}[field]
		}
		v.err = fmt.Errorf("%s: %w", field, e.err)
		return v
	}
	v.reason, v.tmplName, v.tmplGen = reasonResolved, e.name, e.gen
	v.replicas = headroom.Replicas(b.Spec, e.src)
	v.pods = headroom.VirtualPods(b.Namespace, b.Name, e.src.Template, v.replicas)
	v.chunk = headroom.ChunkRequests(e.src.Template.Spec)
	return v
}

func sortedPoolNames(m map[string]*apiv1.NodePool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// add plans the buffers' virtual pods: first onto the free capacity
// of existing nodes and in-flight NodeClaims (those placed become pods
// bound there: the space stays taken for every later placement, and
// consolidation must move them like real pods), the rest as the lowest
// priority pending pods (after every real one), for which the solver buys
// capacity. They are never Pod objects, so the kube-scheduler sees their
// space as free and real pods take it first.
func (bs *buffers) add(s *snapshot, now time.Time) {
	views := bs.views(s, now)
	s.buffers = views
	var vpods []solver.Pod
	for _, v := range views {
		for _, p := range v.pods {
			sp := s.solverPod(p, solver.VolumeSet{})
			sp.CreationUnix = math.MaxInt64 // after real pods of the same size
			vpods = append(vpods, sp)
		}
	}
	if len(vpods) == 0 {
		return
	}
	plan := solver.Solve(solver.Input{Pods: vpods, ExistingNodes: s.input.ExistingNodes, DaemonSets: s.input.DaemonSets,
		ExistingPods: s.input.ExistingPods, NamespaceLabels: s.input.NamespaceLabels,
		Strategies: solver.DefaultStrategies()[:1], DisableLPGuided: true, Budget: -1})
	byKey := make(map[string]int, len(vpods))
	for i, p := range vpods {
		byKey[p.Key()] = i
	}
	nodeIdx := make(map[string]int, len(s.input.ExistingNodes))
	for i, n := range s.input.ExistingNodes {
		nodeIdx[n.Name] = i
	}
	placed := make([]bool, len(vpods))
	s.virtualKeys = map[string]bool{}
	s.bufferPlaced, s.bufferOnNode = map[string][]string{}, map[string]int{}
	for _, pl := range plan.ExistingPlacements {
		i, ok1 := byKey[pl.Pod]
		ni, ok2 := nodeIdx[pl.Node]
		if !ok1 || !ok2 {
			continue
		}
		placed[i] = true
		n := &s.input.ExistingNodes[ni]
		n.Available = n.Available.Sub(vpods[i].Requests)
		s.input.ExistingPods = append(s.input.ExistingPods, solver.ExistingPod{Pod: vpods[i], Node: n.Name, Zone: n.Labels[apiv1.LabelZone]})
		b := headroom.BufferOf(pl.Pod)
		s.bufferPlaced[b] = append(s.bufferPlaced[b], n.Name)
		s.bufferOnNode[n.Name]++
	}
	for i, p := range vpods {
		s.virtualKeys[p.Key()] = true
		if !placed[i] {
			s.input.Pods = append(s.input.Pods, p)
			s.virtualPending++
		}
	}
}
