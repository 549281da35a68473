package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/headroom"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver/resources"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
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

// Headroom is the leader's check of the capacity buffers over the
// solver's snapshot: their status, the pods they absorbed, and how many
// virtual pods provisioning must buy capacity for. What it remembers from
// one check to the next is capacity.Headroom.
type Headroom struct {
	cluster   *kube.Cluster
	metrics   *metrics.Metrics
	log       *zap.Logger
	gate      bool // the CapacityBuffer feature gate
	snapshots *snapshots
	events    *events // an invalid NodePool headroom is reported once
	state     *capacity.Headroom
}

// configured says whether any buffer may exist: the CapacityBuffer
// gate on with some CapacityBuffer, or a NodePool annotated
// joinery.sh/headroom.
func (h *Headroom) configured() bool {
	if h.gate {
		if bs, _ := h.cluster.CapacityBuffers(); len(bs) > 0 {
			return true
		}
	}
	pools, _ := h.cluster.NodePools()
	for _, np := range pools {
		if _, ok := np.Annotations[headroom.AnnotationPoolHeadroom]; ok {
			return true
		}
	}
	return false
}

// isVirtualUID reports whether a pod UID is a virtual pod's (headroom.VirtualPods).
func isVirtualUID(uid string) bool { return strings.HasPrefix(uid, "capacitybuffer/") }

// CheckHeadroom is the leader's look at the buffers (the provisioner calls
// it every resync while any is configured): it snapshots the cluster,
// counts real pods that landed in buffer space (metrics), writes every
// CapacityBuffer's status, reports invalid buffers, and returns how many
// virtual pods existing capacity cannot hold (>0: provisioning must buy
// capacity for the buffer).
func (h *Headroom) CheckHeadroom(ctx context.Context) int {
	if !h.configured() {
		h.state.KeepGauges(nil)
		return 0
	}
	now := time.Now()
	pools, _ := h.cluster.NodePools()
	s, _ := h.snapshots.build(now, pools, h.cluster.NodeClass)
	check := h.placement(s)
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
		h.metrics.SetBuffer(v.ns, v.name, len(v.pods), held, float64(total[resources.CPU])/1000, float64(total[resources.Memory]))
		h.report(ctx, v, held, now)
	}
	h.state.KeepGauges(live)
	for k, ab := range h.state.Observe(check) {
		activityLogger(ctx, h.log).Info("capacity buffer absorbed pods", zap.String("buffer", k), zap.Int("pods", ab.Pods), zap.Bool("burstStart", ab.Burst))
	}
	return h.state.Short(s.virtualPending, now)
}

// ForgetBufferUnschedulable forgets that a plan found no room for virtual
// pods (a NodePool or EC2NodeClass changed: there may be room now).
func (h *Headroom) ForgetBufferUnschedulable() { h.state.ForgetUnschedulable() }

// placement is where the snapshot placed each buffer's virtual pods and
// which real pods each node holds (headroom.Check, Wanted left to fill).
// Nodes are keyed by their NodeClaim where there is one, so a buffer
// placed on a launching NodeClaim is on the same key once its node
// registers.
func (h *Headroom) placement(s *snapshot) headroom.Check {
	claimOf := map[string]string{}
	for _, nc := range h.cluster.NodeClaims() {
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
	return check
}

// report writes a CapacityBuffer's status (upstream's fields and
// conditions: ReadyForProvisioning, Provisioning) when it changed, and
// reports an invalid buffer or NodePool annotation once: a Warning Event
// and a log line naming the field.
func (h *Headroom) report(ctx context.Context, v *bufferView, held int, now time.Time) {
	log := activityLogger(ctx, h.log)
	if v.obj == nil {
		if v.err != nil && h.events.first("headroom/"+v.name+"/"+v.err.Error(), time.Hour, now) {
			log.Error("NodePool headroom not honoured", zap.String("nodepool", v.name), zap.Error(v.err))
			if h.cluster.Recorder != nil && v.pool != nil {
				h.cluster.Recorder.Eventf(poolRef(v.pool), corev1.EventTypeWarning, eventInvalidHeadroom, "%v", v.err)
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
		if h.cluster.Recorder != nil {
			h.cluster.Recorder.Eventf(bufferRef(b), corev1.EventTypeWarning, eventInvalidBuffer, "%v", v.err)
		}
	}
	if err := h.cluster.SetCapacityBufferStatus(ctx, b.Namespace, b.Name, st); err != nil && ctx.Err() == nil {
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
