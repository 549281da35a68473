package controller

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/nodeclass"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markDrift keeps the Drifted condition of the class's NodeClaims true to
// what the class (with its new status) and their NodePools say now, so
// `kubectl get nodeclaims` shows it; consolidation decides on the same
// function. First it re-stamps the NodePool hash of claims stamped with
// another hash version (disruption.HashRestamp), so a change of the hash
// function never drifts a fleet. A write races other writers through the
// resourceVersion: a conflict is left to the next pass.
func (r *nodeClassReconciler) markDrift(ctx context.Context, cls *apiv1.EC2NodeClass) {
	pools := map[string]*apiv1.NodePool{}
	valid, _ := r.cl.NodePools()
	for _, p := range valid {
		pools[p.Name] = p
	}
	// nil until the market holds live instance types: no
	// InstanceTypeNotFound before then (see disruption.ClassOfferings).
	offered := disruption.ClassOfferings(cls, r.market)
	for _, nc := range r.cl.NodeClaims() {
		if nc.Spec.NodeClassRef == nil || nc.Spec.NodeClassRef.Name != cls.Name || nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" {
			continue
		}
		pool := pools[nc.Labels[apiv1.LabelNodePool]]
		if !r.restamp(ctx, nc, pool) {
			continue
		}
		var node *corev1.Node
		if nc.Status.NodeName != "" {
			node, _ = r.cl.Nodes.Get(nc.Status.NodeName)
		}
		reason, msg := disruption.Drift(nc, node, pool, cls, offered, nodeclass.LaunchedFrom(nc))
		conds, changed := driftCondition(nc.Status.Conditions, reason, msg)
		if !changed {
			continue
		}
		patch, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": nc.ResourceVersion},
			"status":   map[string]any{"conditions": conds},
		})
		if err := r.cl.PatchNodeClaimStatus(ctx, nc.Name, patch); err != nil {
			r.log.Debug("drift condition", zap.String("nodeclaim", nc.Name), zap.Error(err))
			continue
		}
		if reason != "" {
			r.log.Info("nodeclaim drifted", zap.String("nodeclaim", nc.Name), zap.String("reason", reason), zap.String("message", msg))
		}
	}
}

// restamp writes disruption.HashRestamp's annotations on a claim stamped
// with another hash version, and reports whether the claim may be judged
// now (false: the write failed; the next pass tries again). On success
// nc holds the new annotations and resourceVersion.
func (r *nodeClassReconciler) restamp(ctx context.Context, nc *apiv1.NodeClaim, pool *apiv1.NodePool) bool {
	ann := disruption.HashRestamp(nc, pool)
	if ann == nil {
		return true
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": nc.ResourceVersion, "annotations": ann}})
	if err := r.cl.PatchNodeClaim(ctx, nc.Name, patch); err != nil {
		r.log.Debug("re-stamp nodepool hash", zap.String("nodeclaim", nc.Name), zap.Error(err))
		return false
	}
	fresh, err := r.cl.NodeClaim(ctx, nc.Name)
	if err != nil {
		return false
	}
	*nc = *fresh
	_, rehashed := ann[disruption.AnnotationNodePoolHash]
	r.log.Info("nodeclaim re-stamped with the current nodepool hash version", zap.String("nodeclaim", nc.Name),
		zap.String("version", disruption.NodePoolHashVersion), zap.Bool("rehashed", rehashed))
	return true
}

// markDriftOnPoolChange re-judges the drift of every class's NodeClaims
// soon after a NodePool's spec changes (a requirement edited, a taint
// added), instead of at the next resync. Changes are coalesced: one pass
// at most every second.
func (r *nodeClassReconciler) markDriftOnPoolChange(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.poolChanged:
		}
		for _, c := range r.cl.NodeClasses() {
			if c.DeletionTimestamp == nil {
				r.markDrift(ctx, c)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// driftCondition returns conds with Drifted set (reason != "") or removed,
// and whether that changed them.
func driftCondition(conds []metav1.Condition, reason, msg string) ([]metav1.Condition, bool) {
	cur := apiv1.FindCondition(conds, apiv1.ConditionDrifted)
	if reason == "" {
		if cur == nil {
			return conds, false
		}
		return slices.DeleteFunc(slices.Clone(conds), func(c metav1.Condition) bool { return c.Type == apiv1.ConditionDrifted }), true
	}
	if cur != nil && cur.Status == metav1.ConditionTrue && cur.Reason == reason && cur.Message == msg {
		return conds, false
	}
	return apiv1.SetCondition(conds, metav1.Condition{Type: apiv1.ConditionDrifted, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg}, metav1.Now()), true
}
