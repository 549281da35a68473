package activities

import (
	"context"

	"github.com/joinery/joinery/policy/drain"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DrainStep makes one pass over a node's pods: it evicts the pods of the
// lowest tier still present through the Eviction API (policy/v1), so
// PodDisruptionBudgets are enforced by the API server; a 429 leaves the pod
// for the next pass. A pod still there once the workflow-time Now reaches
// Deadline minus its own grace period is deleted instead (the NodeClaim's
// termination grace period is what the platform team promised). Mirror
// pods, finished pods and pods tolerating the disrupted taint are not
// waited on. Evicting an evicted pod is a no-op, so passes can be retried.
func (a *Drain) DrainStep(ctx context.Context, r workflows.DrainRequest) (workflows.DrainStatus, error) {
	var st workflows.DrainStatus
	remaining, tier, pods := drain.Next(a.cluster.PodsOnNode(r.NodeName))
	st.Remaining, st.Tier = remaining, tier
	if st.Remaining == 0 {
		return st, nil
	}
	for _, p := range pods {
		due := drain.ForceDeleteAt(p, r.Deadline)
		if !due.IsZero() && (st.NextForceDelete.IsZero() || due.Before(st.NextForceDelete)) {
			st.NextForceDelete = due
		}
		if p.DeletionTimestamp != nil {
			continue // already going; wait for it
		}
		if !due.IsZero() && !r.Now.Before(due) {
			grace := p.Spec.TerminationGracePeriodSeconds
			err := a.cluster.DeletePod(ctx, p, grace, "")
			if err != nil && !apierrors.IsNotFound(err) {
				return st, err
			}
			st.Deleted = append(st.Deleted, key(p))
			a.cluster.Recorder.Eventf(p, corev1.EventTypeWarning, "Deleted", "deleted at the node's termination grace period deadline (drain of %s)", r.NodeName)
			activityLogger(ctx, a.log).Warn("pod deleted at termination grace deadline", zap.String("pod", key(p)), zap.String("node", r.NodeName))
			continue
		}
		if !r.EvictDoNotDisrupt && a.protection(ctx, p, r.Now).Active {
			st.Blocked = append(st.Blocked, key(p))
			continue
		}
		err := a.cluster.EvictPod(ctx, p)
		switch {
		case err == nil:
			st.Evicted = append(st.Evicted, key(p))
			a.cluster.Recorder.Eventf(p, corev1.EventTypeNormal, "Evicted", "evicted to drain node %s", r.NodeName)
		case apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err):
			st.Blocked = append(st.Blocked, key(p))
		default:
			return st, err
		}
	}
	if len(st.Evicted) > 0 || len(st.Blocked) > 0 {
		activityLogger(ctx, a.log).Info("drain pass", zap.String("node", r.NodeName), zap.Int("tier", st.Tier), zap.Int("remaining", st.Remaining),
			zap.Int("evicted", len(st.Evicted)), zap.Int("blocked", len(st.Blocked)), zap.Int("deleted", len(st.Deleted)))
	}
	return st, nil
}

func key(p *corev1.Pod) string { return drain.Key(p) }
