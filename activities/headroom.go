package activities

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/headroom"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition reasons on CapacityBuffers (Karpenter's where it has them).
const (
	reasonResolved            = "Resolved"
	reasonResolutionFailed    = "ResolutionFailed"
	reasonPodTemplateNotFound = "PodTemplateNotFound"
	reasonScalableRefNotFound = "ScalableRefNotFound"
	reasonProvisioned         = "CapacityProvisioned"
	reasonPending             = "CapacityPending"
	eventInvalidBuffer        = "InvalidCapacityBuffer"
	eventInvalidHeadroom      = "InvalidHeadroom"
)

// refTTL is how long a resolved podTemplateRef or scalableRef is reused
// (they are read with GETs, not watched).
const refTTL = 5 * time.Second

type headroomState struct {
	mu      sync.Mutex
	refs    map[string]refEntry
	tracker headroom.Tracker
	gauges  map[string]bool // buffers whose gauges are set
	// unschedAt and unsched: when a plan in this process last left
	// virtual pods unschedulable, and how many (no trigger for as many
	// within capacity.UnschedulableRetry).
	unschedAt time.Time
	unsched   int
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

// headroomConfigured says whether any buffer may exist: the CapacityBuffer
// gate on with some CapacityBuffer, or a NodePool annotated
// joinery.sh/headroom.
func (a *world) headroomConfigured() bool {
	if a.CapacityBuffer {
		if bs, _ := a.Cluster.CapacityBuffers(); len(bs) > 0 {
			return true
		}
	}
	pools, _ := a.Cluster.NodePools()
	for _, np := range pools {
		if _, ok := np.Annotations[headroom.AnnotationPoolHeadroom]; ok {
			return true
		}
	}
	return false
}

// resolveRef reads a buffer's podTemplateRef or scalableRef (cached refTTL).
func (a *world) resolveRef(ctx context.Context, b *capacitybuffer.CapacityBuffer, now time.Time) refEntry {
	var k string
	if r := b.Spec.PodTemplateRef; r != nil {
		k = b.Namespace + "/PodTemplate/" + r.Name
	} else {
		k = b.Namespace + "/" + b.Spec.ScalableRef.Kind + "/" + b.Spec.ScalableRef.Name
	}
	h := &a.headroom
	h.mu.Lock()
	e, ok := h.refs[k]
	h.mu.Unlock()
	if ok && now.Sub(e.at) < refTTL {
		return e
	}
	e = refEntry{at: now}
	if r := b.Spec.PodTemplateRef; r != nil {
		pt, err := a.Cluster.PodTemplate(ctx, b.Namespace, r.Name)
		if err == nil {
			e.src, e.gen, e.name = headroom.Source{Template: pt.Template}, pt.Generation, pt.Name
		}
		e.err = err
	} else {
		r := b.Spec.ScalableRef
		tmpl, n, err := a.Cluster.Scalable(ctx, b.Namespace, r.Kind, r.Name)
		e.src, e.err = headroom.Source{Template: tmpl, ScalableReplicas: n}, err
	}
	h.mu.Lock()
	if h.refs == nil {
		h.refs = map[string]refEntry{}
	}
	h.refs[k] = e
	h.mu.Unlock()
	return e
}

// bufferViews are the buffers to plan for: every CapacityBuffer (gate
// on) with its virtual pods or why it has none, then every annotated
// NodePool's headroom.
func (a *world) bufferViews(s *snapshot, now time.Time) []*bufferView {
	var out []*bufferView
	if a.CapacityBuffer {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bs, bad := a.Cluster.CapacityBuffers()
		for _, why := range bad {
			if a.dedupe.first("capacitybuffer/decode/"+why, time.Hour, now) {
				a.Log.Warn("CapacityBuffer ignored", zap.String("why", why))
			}
		}
		for _, b := range bs {
			out = append(out, a.bufferView(ctx, b, now))
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

func (a *world) bufferView(ctx context.Context, b *capacitybuffer.CapacityBuffer, now time.Time) *bufferView {
	v := &bufferView{ns: b.Namespace, name: b.Name, obj: b}
	if err := headroom.Validate(b); err != nil {
		v.err, v.reason = err, reasonResolutionFailed
		return v
	}
	e := a.resolveRef(ctx, b, now)
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

// addBuffers plans the buffers' virtual pods: first onto the free capacity
// of existing nodes and in-flight NodeClaims (those placed become pods
// bound there: the space stays taken for every later placement, and
// consolidation must move them like real pods), the rest as the lowest
// priority pending pods (after every real one), for which the solver buys
// capacity. They are never Pod objects, so the kube-scheduler sees their
// space as free and real pods take it first.
func (a *world) addBuffers(s *snapshot, now time.Time) {
	views := a.bufferViews(s, now)
	s.buffers = views
	var vpods []solver.Pod
	for _, v := range views {
		for _, p := range v.pods {
			sp := a.solverPod(s, p, solver.VolumeSet{})
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

// isVirtualUID reports whether a pod UID is a virtual pod's (headroom.VirtualPods).
func isVirtualUID(uid string) bool { return strings.HasPrefix(uid, "capacitybuffer/") }

// CheckHeadroom is the leader's look at the buffers (the provisioner calls
// it every resync while any is configured): it snapshots the cluster,
// counts real pods that landed in buffer space (metrics), writes every
// CapacityBuffer's status, reports invalid buffers, and returns how many
// virtual pods existing capacity cannot hold (>0: provisioning must buy
// capacity for the buffer).
func (a *world) CheckHeadroom(ctx context.Context) int {
	if !a.headroomConfigured() {
		a.forgetBufferGauges(nil)
		return 0
	}
	now := time.Now()
	pools, _ := a.Cluster.NodePools()
	s, _ := a.buildSnapshot(now, pools, a.Cluster.NodeClass)
	// Nodes are keyed by their NodeClaim where there is one, so a buffer
	// placed on a launching NodeClaim is on the same key once its node
	// registers.
	claimOf := map[string]string{}
	for _, nc := range a.Cluster.NodeClaims() {
		if nc.Status.NodeName != "" {
			claimOf[nc.Status.NodeName] = nc.Name
		}
	}
	key := func(node string) string {
		if c, ok := strings.CutPrefix(node, "nodeclaim/"); ok {
			return c
		}
		if c, ok := claimOf[node]; ok {
			return c
		}
		return node
	}
	check := headroom.Check{Wanted: map[string]int{}, Placed: map[string][]string{}, Pods: map[string][]string{}}
	for b, nodes := range s.bufferPlaced {
		for _, n := range nodes {
			check.Placed[b] = append(check.Placed[b], key(n))
		}
	}
	for node := range s.nodePool {
		check.Pods[key(node)] = []string{} // known, if without real pods
	}
	for _, n := range s.input.ExistingNodes {
		if _, ok := check.Pods[key(n.Name)]; !ok {
			check.Pods[key(n.Name)] = []string{} // launching: no pods yet
		}
	}
	for _, ep := range s.input.ExistingPods {
		if !ep.Daemon && !isVirtualUID(ep.Pod.UID) {
			check.Pods[key(ep.Node)] = append(check.Pods[key(ep.Node)], ep.Pod.UID)
		}
	}
	live := map[string]bool{}
	for _, v := range s.buffers {
		k := v.key()
		live[k] = true
		check.Wanted[k] = len(v.pods)
		held := len(s.bufferPlaced[k])
		total := resources.List{}
		for range v.pods {
			total = total.Add(v.chunk)
		}
		a.Metrics.SetBuffer(v.ns, v.name, len(v.pods), held, float64(total[resources.CPU])/1000, float64(total[resources.Memory]))
		a.reportBuffer(ctx, v, held, now)
	}
	a.forgetBufferGauges(live)
	a.headroom.mu.Lock()
	absorbed := a.headroom.tracker.Observe(check)
	a.headroom.mu.Unlock()
	for k, ab := range absorbed {
		ns, name, _ := strings.Cut(k, "/")
		a.Metrics.BufferAbsorbed(ns, name, ab.Pods, ab.Burst)
		a.logger(ctx).Info("capacity buffer absorbed pods", zap.String("buffer", k), zap.Int("pods", ab.Pods), zap.Bool("burstStart", ab.Burst))
	}
	h := &a.headroom
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.virtualPending > 0 && s.virtualPending <= h.unsched && now.Sub(h.unschedAt) < capacity.UnschedulableRetry {
		return 0 // the last plan found no room for these: wait, as for real pods
	}
	return s.virtualPending
}

// bufferUnschedulable records that a plan left n virtual pods unschedulable.
func (a *world) bufferUnschedulable(n int, now time.Time) {
	h := &a.headroom
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsched, h.unschedAt = n, now
}

// ForgetBufferUnschedulable forgets that a plan found no room for virtual
// pods (a NodePool or EC2NodeClass changed: there may be room now).
func (a *world) ForgetBufferUnschedulable() { a.bufferUnschedulable(0, time.Time{}) }

// forgetBufferGauges drops the gauges of buffers not in live (nil: all).
func (a *world) forgetBufferGauges(live map[string]bool) {
	h := &a.headroom
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gauges == nil {
		h.gauges = map[string]bool{}
	}
	for k := range h.gauges {
		if !live[k] {
			ns, name, _ := strings.Cut(k, "/")
			a.Metrics.DeleteBuffer(ns, name)
			delete(h.gauges, k)
		}
	}
	for k := range live {
		h.gauges[k] = true
	}
}

// reportBuffer writes a CapacityBuffer's status (upstream's fields and
// conditions: ReadyForProvisioning, Provisioning) when it changed, and
// reports an invalid buffer or NodePool annotation once: a Warning Event
// and a log line naming the field.
func (a *world) reportBuffer(ctx context.Context, v *bufferView, held int, now time.Time) {
	log := a.logger(ctx)
	if v.obj == nil {
		if v.err != nil && a.dedupe.first("headroom/"+v.name+"/"+v.err.Error(), time.Hour, now) {
			log.Error("NodePool headroom not honoured", zap.String("nodepool", v.name), zap.Error(v.err))
			if a.Cluster.Recorder != nil && v.pool != nil {
				a.Cluster.Recorder.Eventf(poolRef(v.pool), corev1.EventTypeWarning, eventInvalidHeadroom, "%v", v.err)
			}
		}
		return
	}
	b := v.obj
	st := capacitybuffer.Status{ProvisioningStrategy: b.Spec.ProvisioningStrategy}
	ready := metav1.Condition{Type: capacitybuffer.ConditionReadyForProvisioning, Status: metav1.ConditionTrue, Reason: v.reason,
		Message: "pod template resolved", ObservedGeneration: b.Generation, LastTransitionTime: metav1.NewTime(now)}
	conds := []metav1.Condition{ready}
	if v.err != nil {
		conds[0].Status, conds[0].Message = metav1.ConditionFalse, v.err.Error()
	} else {
		r := v.replicas
		st.Replicas = &r
		if b.Spec.PodTemplateRef != nil {
			st.PodTemplateRef = &capacitybuffer.LocalObjectRef{Name: v.tmplName}
			g := v.tmplGen
			st.PodTemplateGeneration = &g
		}
		prov := metav1.Condition{Type: capacitybuffer.ConditionProvisioning, Status: metav1.ConditionTrue, Reason: reasonProvisioned,
			Message: fmt.Sprintf("%d of %d virtual pods fit on existing capacity", held, len(v.pods)), ObservedGeneration: b.Generation, LastTransitionTime: metav1.NewTime(now)}
		if held < len(v.pods) {
			prov.Status, prov.Reason = metav1.ConditionFalse, reasonPending
		}
		conds = append(conds, prov)
	}
	for i := range conds {
		for _, old := range b.Status.Conditions {
			if old.Type == conds[i].Type && old.Status == conds[i].Status {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	st.Conditions = conds
	if sameBufferStatus(b.Status, st) {
		return
	}
	wasInvalid := false
	for _, c := range b.Status.Conditions {
		if c.Type == capacitybuffer.ConditionReadyForProvisioning && c.Status == metav1.ConditionFalse && c.Message == conds[0].Message {
			wasInvalid = true
		}
	}
	if v.err != nil && !wasInvalid {
		log.Error("CapacityBuffer not honoured", zap.String("capacitybuffer", v.key()), zap.String("reason", v.reason), zap.Error(v.err))
		if a.Cluster.Recorder != nil {
			a.Cluster.Recorder.Eventf(bufferRef(b), corev1.EventTypeWarning, eventInvalidBuffer, "%v", v.err)
		}
	}
	if err := a.Cluster.SetCapacityBufferStatus(ctx, b.Namespace, b.Name, st); err != nil && ctx.Err() == nil {
		log.Warn("CapacityBuffer status", zap.String("capacitybuffer", v.key()), zap.Error(err))
	}
}

func sameBufferStatus(have, want capacitybuffer.Status) bool {
	eq32 := func(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eq64 := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqs := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	if !eq32(have.Replicas, want.Replicas) || !eq64(have.PodTemplateGeneration, want.PodTemplateGeneration) || !eqs(have.ProvisioningStrategy, want.ProvisioningStrategy) ||
		(have.PodTemplateRef == nil) != (want.PodTemplateRef == nil) || (have.PodTemplateRef != nil && have.PodTemplateRef.Name != want.PodTemplateRef.Name) {
		return false
	}
	return apiv1.SameConditions(have.Conditions, want.Conditions)
}

func bufferRef(b *capacitybuffer.CapacityBuffer) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: capacitybuffer.CapacityBufferGVR.GroupVersion().String(), Kind: "CapacityBuffer",
		Namespace: b.Namespace, Name: b.Name, UID: b.UID}
}

func poolRef(np *apiv1.NodePool) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: apiv1.NodePoolGVR.GroupVersion().String(), Kind: "NodePool", Name: np.Name, UID: np.UID}
}
