package activities

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// BeginTermination starts a node's ending, as Karpenter's finalizers do:
// the NodeClaim is deleted if it is not yet (a deleted Node deletes its
// NodeClaim) and so is its Node if it carries the termination finalizer
// (a deleted NodeClaim deletes its Node; a Node without the finalizer,
// registered before Joinery set it, is deleted only once drained). The
// grace deadline is the NodeClaim's deletion time plus its
// terminationGracePeriod, stamped once as
// karpenter.sh/nodeclaim-termination-timestamp (an existing stamp wins, so
// retries and a forced "now" agree). A NodeClaim already gone leaves what
// the request knows. Idempotent.
func (a *Lifecycle) BeginTermination(ctx context.Context, r workflows.TerminationRequest) (workflows.TerminationPlan, error) {
	plan := workflows.TerminationPlan{NodeName: r.NodeName, InstanceID: r.InstanceID}
	nc, err := a.cluster.NodeClaim(ctx, r.NodeClaim)
	switch {
	case apierrors.IsNotFound(err):
		nc = nil
	case err != nil:
		return plan, err
	}
	if nc != nil {
		if nc.DeletionTimestamp == nil {
			if err := a.cluster.DeleteNodeClaimKeepFinalizers(ctx, nc.Name); err != nil {
				return plan, fmt.Errorf("delete NodeClaim %s: %w", nc.Name, err)
			}
			if nc, err = a.cluster.NodeClaim(ctx, r.NodeClaim); apierrors.IsNotFound(err) {
				nc = nil
			} else if err != nil {
				return plan, err
			}
		}
	}
	if nc != nil {
		plan.NodePool = nc.Labels[apiv1.LabelNodePool]
		if nc.Status.NodeName != "" {
			plan.NodeName = nc.Status.NodeName
		}
		if id := gc.InstanceID(nc.Status.ProviderID); id != "" {
			plan.InstanceID = id
		}
		if stamp, ok := nc.Annotations[apiv1.AnnotationTerminationTimestamp]; ok {
			if t, err := time.Parse(time.RFC3339, stamp); err == nil {
				plan.Deadline = t
			}
		} else if nc.Spec.TerminationGracePeriod != nil && nc.DeletionTimestamp != nil {
			plan.Deadline = nc.DeletionTimestamp.Add(nc.Spec.TerminationGracePeriod.Duration)
			patch := mustJSON(map[string]interface{}{"metadata": map[string]interface{}{"annotations": map[string]string{
				apiv1.AnnotationTerminationTimestamp: plan.Deadline.UTC().Format(time.RFC3339)}}})
			if err := a.cluster.PatchNodeClaim(ctx, nc.Name, patch); err != nil && !apierrors.IsNotFound(err) {
				return plan, err
			}
		}
	}
	node := a.nodeFor(ctx, plan.NodeName, plan.InstanceID)
	if node == nil {
		plan.NodeName = ""
	} else {
		plan.NodeName = node.Name
		if node.DeletionTimestamp == nil && slices.Contains(node.Finalizers, apiv1.FinalizerTermination) {
			if err := a.cluster.RequestNodeDeletion(ctx, node.Name, ""); err != nil && !apierrors.IsNotFound(err) {
				return plan, fmt.Errorf("delete Node %s: %w", node.Name, err)
			}
		}
	}
	activityLogger(ctx, a.log).Info("termination begun", zap.String("nodeclaim", r.NodeClaim), zap.String("node", plan.NodeName),
		zap.String("instance", plan.InstanceID), zap.Time("deadline", plan.Deadline), zap.String("reason", r.Reason))
	return plan, nil
}

// nodeFor reads the named Node from the API server, or finds the Node of
// the instance in the cache (nil: none).
func (a *Lifecycle) nodeFor(ctx context.Context, name, instance string) *corev1.Node {
	if name != "" {
		if n, err := a.cluster.GetNode(ctx, name); err == nil {
			return n
		}
	}
	return a.cluster.NodeOfInstance(instance)
}

// WaitVolumesDetached heartbeats until no VolumeAttachment names the node
// (the attach-detach controller deletes them once the volumes are
// detached), or until r.Until, when it reports what is left.
func (a *Lifecycle) WaitVolumesDetached(ctx context.Context, r workflows.VolumeWait) (workflows.VolumeStatus, error) {
	for {
		activity.RecordHeartbeat(ctx)
		attached := a.attachedVolumes(r.NodeName)
		if len(attached) == 0 {
			return workflows.VolumeStatus{}, nil
		}
		if !time.Now().Before(r.Until) {
			activityLogger(ctx, a.log).Warn("volumes still attached; terminating anyway", zap.String("node", r.NodeName), zap.Strings("volumeAttachments", attached))
			return workflows.VolumeStatus{Attached: attached, TimedOut: true}, nil
		}
		select {
		case <-ctx.Done():
			return workflows.VolumeStatus{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (a *Lifecycle) attachedVolumes(node string) []string {
	vas, _ := a.cluster.VolumeAttachments.List(labels.Everything())
	var out []string
	for _, va := range vas {
		if va.Spec.NodeName == node {
			out = append(out, va.Name)
		}
	}
	sort.Strings(out)
	return out
}

// RemoveTerminationFinalizers ends a terminated node's objects: the Node's
// finalizer is removed (and it is deleted if it was not), then the
// NodeClaim's. Missing objects are fine, so retries are safe.
func (a *Lifecycle) RemoveTerminationFinalizers(ctx context.Context, r workflows.TerminateRequest) error {
	if n := a.nodeFor(ctx, r.NodeName, r.InstanceID); n != nil {
		if err := a.cluster.DeleteNode(ctx, n.Name); err != nil {
			return fmt.Errorf("release Node %s: %w", n.Name, err)
		}
	}
	nc, _ := a.cluster.NodeClaim(ctx, r.NodeClaim)
	if err := a.cluster.DeleteNodeClaim(ctx, r.NodeClaim); err != nil {
		return fmt.Errorf("release NodeClaim %s: %w", r.NodeClaim, err)
	}
	if r.InstanceID != "" && nc != nil {
		a.nodeClaimEnded(nc, r.Reason, r.NodeName != "" || nc.Status.NodeName != "")
	}
	activityLogger(ctx, a.log).Info("nodeclaim terminated", zap.String("nodeclaim", r.NodeClaim), zap.String("instance", r.InstanceID), zap.String("reason", r.Reason))
	return nil
}

// disruptedPrefix starts the termination reason of a node disruption
// ended ("disrupted: underutilized", workflows.terminateDisrupted).
const disruptedPrefix = "disrupted: "

// nodeClaimEnded records a NodeClaim whose instance is terminated and
// whose object is gone (nc: as read just before; nil: already gone, not
// counted): the terminated counters, and for a disruption
// karpenter_nodeclaims_disrupted_total with Karpenter's labels.
func (a *Lifecycle) nodeClaimEnded(nc *apiv1.NodeClaim, reason string, hadNode bool) {
	if nc == nil {
		return
	}
	pool, capacity, zone := nc.Labels[apiv1.LabelNodePool], nc.Labels[apiv1.LabelCapacityType], nc.Labels[apiv1.LabelZone]
	a.metrics.NodeClaimEnded(pool, reason, capacity, zone, hadNode)
	why, ok := strings.CutPrefix(reason, disruptedPrefix)
	if !ok {
		return
	}
	policy := ""
	if why == saga.ReasonEmpty || why == saga.ReasonUnderused {
		if np := a.pools.nodePool(pool); np != nil {
			policy = metrics.SnakeCase(np.Spec.Disruption.ConsolidationPolicy)
		}
	}
	var grace *time.Duration
	if g := nc.Spec.TerminationGracePeriod; g != nil {
		grace = &g.Duration
	}
	a.metrics.NodeClaimDisruptedBy(pool, why, capacity, policy, metrics.TerminationMode(grace))
}
