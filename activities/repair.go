package activities

import (
	"context"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DeleteNodePods deletes every pod of an unreachable node with grace 0
// (mirror pods aside: they are the kubelet's) and returns how many: no
// kubelet is left to run a graceful exit or confirm one, so a graceful
// deletion would leave the pods Terminating, and their controllers would
// not replace them, until the node object went. Idempotent.
func (a *Drain) DeleteNodePods(ctx context.Context, node string) (int, error) {
	zero := int64(0)
	n := 0
	for _, p := range a.cluster.PodsOnNode(node) {
		if isMirror(p) {
			continue
		}
		if err := a.cluster.DeletePod(ctx, p, &zero, p.UID); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return n, err
		}
		n++
		a.cluster.Recorder.Eventf(p, corev1.EventTypeWarning, "Deleted", "deleted: node %s is unreachable and is being repaired", node)
	}
	activityLogger(ctx, a.log).Info("unreachable node's pods deleted", zap.String("node", node), zap.Int("pods", n))
	return n, nil
}
