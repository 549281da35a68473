package activities

import (
	"context"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Drain tiers, evicted in order; each tier must be gone before the next
// (Karpenter's termination order).
const (
	tierNonCritical = iota + 1
	tierNonCriticalDaemon
	tierCritical
	tierCriticalDaemon
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
	byTier := map[int][]*corev1.Pod{}
	for _, p := range a.Cluster.PodsOnNode(r.NodeName) {
		if !waitedOn(p) {
			continue
		}
		byTier[tierOf(p)] = append(byTier[tierOf(p)], p)
		st.Remaining++
	}
	if st.Remaining == 0 {
		return st, nil
	}
	for t := tierNonCritical; t <= tierCriticalDaemon; t++ {
		if len(byTier[t]) > 0 {
			st.Tier = t
			break
		}
	}
	pods := byTier[st.Tier]
	sort.Slice(pods, func(i, j int) bool { return key(pods[i]) < key(pods[j]) })
	for _, p := range pods {
		due := forceDeleteAt(p, r.Deadline)
		if !due.IsZero() && (st.NextForceDelete.IsZero() || due.Before(st.NextForceDelete)) {
			st.NextForceDelete = due
		}
		if p.DeletionTimestamp != nil {
			continue // already going; wait for it
		}
		if !due.IsZero() && !r.Now.Before(due) {
			grace := p.Spec.TerminationGracePeriodSeconds
			err := a.Cluster.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: grace})
			if err != nil && !apierrors.IsNotFound(err) {
				return st, err
			}
			st.Deleted = append(st.Deleted, key(p))
			a.Cluster.Recorder.Eventf(p, corev1.EventTypeWarning, "Deleted", "deleted at the node's termination grace period deadline (drain of %s)", r.NodeName)
			a.logger(ctx).Warn("pod deleted at termination grace deadline", zap.String("pod", key(p)), zap.String("node", r.NodeName))
			continue
		}
		if !r.EvictDoNotDisrupt && a.podProtection(ctx, p, r.Now).Active {
			st.Blocked = append(st.Blocked, key(p))
			continue
		}
		err := a.Cluster.Kube.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		})
		switch {
		case err == nil:
			st.Evicted = append(st.Evicted, key(p))
			a.Cluster.Recorder.Eventf(p, corev1.EventTypeNormal, "Evicted", "evicted to drain node %s", r.NodeName)
		case apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err):
			st.Blocked = append(st.Blocked, key(p))
		default:
			return st, err
		}
	}
	if len(st.Evicted) > 0 || len(st.Blocked) > 0 {
		a.logger(ctx).Info("drain pass", zap.String("node", r.NodeName), zap.Int("tier", st.Tier), zap.Int("remaining", st.Remaining),
			zap.Int("evicted", len(st.Evicted)), zap.Int("blocked", len(st.Blocked)), zap.Int("deleted", len(st.Deleted)))
	}
	return st, nil
}

// forceDeleteAt is Deadline minus the pod's grace period (zero: no deadline).
func forceDeleteAt(p *corev1.Pod, deadline time.Time) time.Time {
	if deadline.IsZero() {
		return time.Time{}
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.Spec.TerminationGracePeriodSeconds
	}
	return deadline.Add(-time.Duration(grace) * time.Second)
}

// waitedOn: the pods a drain waits for.
func waitedOn(p *corev1.Pod) bool {
	if !kube.IsActive(p) || isMirror(p) {
		return false
	}
	for _, t := range p.Spec.Tolerations {
		keyOK := t.Key == apiv1.TaintKeyDisrupted || (t.Key == "" && t.Operator == corev1.TolerationOpExists)
		effectOK := t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule
		if keyOK && effectOK {
			return false
		}
	}
	return true
}

func tierOf(p *corev1.Pod) int {
	critical := p.Spec.PriorityClassName == "system-cluster-critical" || p.Spec.PriorityClassName == "system-node-critical"
	daemon := kube.IsDaemonSetPod(p)
	switch {
	case critical && daemon:
		return tierCriticalDaemon
	case critical:
		return tierCritical
	case daemon:
		return tierNonCriticalDaemon
	}
	return tierNonCritical
}

func key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
