package controller

import (
	"context"
	"encoding/json"
	"slices"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/disruption"
	"github.com/joinery/joinery/nodeclass"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markDrift keeps the Drifted condition of the class's NodeClaims true to
// what the class (with its new status) and their NodePools say now, so
// `kubectl get nodeclaims` shows it; consolidation decides on the same
// function. A write races other condition writers through the
// resourceVersion: a conflict is left to the next pass.
func (r *nodeClassReconciler) markDrift(ctx context.Context, cls *apiv1.EC2NodeClass) {
	pools := map[string]*apiv1.NodePool{}
	valid, _ := r.cl.NodePools()
	for _, p := range valid {
		pools[p.Name] = p
	}
	for _, nc := range r.cl.NodeClaims() {
		if nc.Spec.NodeClassRef == nil || nc.Spec.NodeClassRef.Name != cls.Name || nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" {
			continue
		}
		reason, msg := disruption.Drift(nc, pools[nc.Labels[apiv1.LabelNodePool]], cls, nodeclass.LaunchedFrom(nc))
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
