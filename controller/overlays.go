package controller

import (
	"context"
	"strings"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// overlayStatus is the leader's NodeOverlay reporter: every overlay's
// ValidationSucceeded and Ready conditions, as Karpenter sets them (False
// with reason Conflict or RuntimeValidation for one not applied).
type overlayStatus struct {
	cl    *kube.Cluster
	acts  *activities.Activities
	log   *zap.Logger
	every time.Duration
	// unmodelled is what was last said of capacity not planned for.
	unmodelled string
}

func (r *overlayStatus) run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		r.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *overlayStatus) reconcile(ctx context.Context) {
	list, set := r.acts.ResolveOverlays()
	for _, o := range list {
		want := overlayConditions(o, set)
		if apiv1.SameConditions(o.Status.Conditions, want) {
			continue
		}
		if want[0].Status == metav1.ConditionFalse {
			r.log.Warn("NodeOverlay not applied", zap.String("nodeoverlay", o.Name), zap.String("reason", want[0].Reason), zap.String("message", want[0].Message))
		}
		if err := r.cl.SetNodeOverlayConditions(ctx, o.Name, want); err != nil && ctx.Err() == nil {
			r.log.Warn("NodeOverlay status", zap.String("nodeoverlay", o.Name), zap.Error(err))
		}
	}
	if u := strings.Join(set.Unmodelled, "; "); u != r.unmodelled {
		r.unmodelled = u
		for _, why := range set.Unmodelled {
			r.log.Warn("NodeOverlay capacity ignored", zap.String("why", why))
		}
	}
}

// overlayConditions are the conditions an overlay should carry (the
// transition time kept when the status does not change).
func overlayConditions(o *v1alpha1.NodeOverlay, set *overlay.Set) []metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionValidationSucceeded, Status: metav1.ConditionTrue, Reason: v1alpha1.ConditionValidationSucceeded,
		ObservedGeneration: o.Generation, LastTransitionTime: metav1.Now()}
	if v, ok := set.Rejected[o.Name]; ok {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, v.Reason, v.Message
	}
	ready := c
	ready.Type = v1alpha1.ConditionReady
	if c.Status == metav1.ConditionTrue {
		ready.Reason = "Ready"
	}
	out := []metav1.Condition{c, ready}
	for i := range out {
		for _, old := range o.Status.Conditions {
			if old.Type == out[i].Type && old.Status == out[i].Status {
				out[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	return out
}
