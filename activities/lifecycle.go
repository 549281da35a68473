package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MarkNodeClaimLaunched records the instance on the NodeClaim: instance
// labels (type, zone, capacity type and the type's well-known labels),
// status.providerID, capacity, allocatable and the Launched condition.
func (a *Lifecycle) MarkNodeClaimLaunched(ctx context.Context, l workflows.NodeClaimLaunched) error {
	nc, err := a.cluster.NodeClaim(ctx, l.NodeClaim)
	if apierrors.IsNotFound(err) {
		return temporal.NewNonRetryableApplicationError("NodeClaim deleted", workflows.ErrNodeClaimGone, err)
	}
	if err != nil {
		return err
	}
	lbl := map[string]string{
		apiv1.LabelZone: l.Instance.Zone, apiv1.LabelCapacityType: l.Instance.CapacityType,
	}
	if it, ok := a.types.Get(l.Instance.InstanceType); ok {
		cls, _ := a.cluster.NodeClass(nc.Spec.NodeClassRef.Name) // nil: Linux labels
		for k, v := range it.For(cls).Labels() {
			lbl[k] = v
		}
	}
	if id := l.Instance.CapacityReservationID; id != "" {
		maps.Copy(lbl, reservationLabels(id, l.Instance.ReservationType, l.Instance.ReservationInterruptible))
	}
	if err := a.placementLabels(ctx, nc, l.Instance.ID, lbl); err != nil {
		return err
	}
	meta := map[string]interface{}{"labels": lbl, "annotations": launchedAnnotations(l.Instance)}
	if err := a.cluster.PatchNodeClaim(ctx, l.NodeClaim, mustJSON(map[string]interface{}{"metadata": meta})); err != nil {
		return err
	}
	now := metav1.Now()
	conds := apiv1.SetCondition(nc.Status.Conditions, metav1.Condition{Type: apiv1.ConditionLaunched, Status: metav1.ConditionTrue,
		Reason: apiv1.ReasonLaunched, Message: "instance " + l.Instance.ID}, now)
	if !apiv1.IsConditionTrue(conds, apiv1.ConditionRegistered) {
		conds = apiv1.SetCondition(conds, metav1.Condition{Type: apiv1.ConditionRegistered, Status: metav1.ConditionUnknown,
			Reason: apiv1.ReasonNodeNotFound, Message: "Node not registered with cluster"}, now)
	}
	if !apiv1.IsConditionTrue(conds, apiv1.ConditionInitialized) {
		conds = apiv1.SetCondition(conds, metav1.Condition{Type: apiv1.ConditionInitialized, Status: metav1.ConditionUnknown,
			Reason: apiv1.ReasonNodeNotFound, Message: "Node not registered with cluster"}, now)
	}
	status := map[string]interface{}{"providerID": l.Instance.ProviderID, "imageID": l.Instance.ImageID, "conditions": conds}
	if shape, ok := a.shapeOf(nc, l.Instance.InstanceType); ok {
		status["capacity"] = shape.Capacity.ToResourceList()
		status["allocatable"] = shape.Allocatable.ToResourceList()
	}
	return a.cluster.PatchNodeClaimStatus(ctx, l.NodeClaim, mustJSON(map[string]interface{}{"status": status}))
}

// WaitForNodeReady heartbeats until the instance's Node has registered and
// is initialized. Registration (once the Node with the instance's provider
// ID is in the cache) makes the Node agree with the NodeClaim
// (lifecycle.SyncNode: labels, annotations, taints, owner reference,
// termination finalizer, karpenter.sh/registered, the unregistered taint
// removed) and sets Registered. Initialization (lifecycle.Initialized:
// Ready, startup and ephemeral taints gone, requested extended resources in
// allocatable) labels karpenter.sh/initialized and sets Initialized and
// Ready; until then Initialized is Unknown with the reason it waits for. A
// NodeClaim deleted (or being deleted) meanwhile fails with ErrNodeClaimGone.
// The workflow's schedule-to-close timeout is the registration TTL.
func (a *Lifecycle) WaitForNodeReady(ctx context.Context, l workflows.NodeClaimLaunched) (workflows.NodeReady, error) {
	log := activityLogger(ctx, a.log).With(zap.String("nodeclaim", l.NodeClaim), zap.String("instance", l.Instance.ID))
	gone := func(err error) error {
		return temporal.NewNonRetryableApplicationError("NodeClaim deleted", workflows.ErrNodeClaimGone, err)
	}
	var registeredNC *apiv1.NodeClaim // the NodeClaim as read (and updated) at registration
	lastReason := ""
	var closedSince time.Time // when this attempt first saw the Node Ready and closed
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	wait := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			return nil
		}
	}
	for {
		activity.RecordHeartbeat(ctx)
		// Poll the informer caches; read the NodeClaim from the API server
		// only to act on it or to confirm it is gone: a GET per poll per
		// launching claim loads the API server with every pending pod.
		node := a.cluster.NodeByProviderID(l.Instance.ProviderID)
		exists, deleting := a.cluster.NodeClaimState(l.NodeClaim)
		if deleting {
			return workflows.NodeReady{}, gone(nil)
		}
		if !exists || (node != nil && registeredNC == nil) {
			nc, err := a.cluster.NodeClaim(ctx, l.NodeClaim)
			if apierrors.IsNotFound(err) {
				return workflows.NodeReady{}, gone(err)
			}
			if err == nil && nc.DeletionTimestamp != nil {
				return workflows.NodeReady{}, gone(nil)
			}
			if err == nil && node != nil {
				if err := a.register(ctx, nc, node); err != nil {
					return workflows.NodeReady{}, err
				}
				registeredNC = nc
				log.Info("node registered", zap.String("node", node.Name))
			}
		}
		if node == nil || registeredNC == nil {
			if err := wait(); err != nil {
				return workflows.NodeReady{}, err
			}
			continue
		}
		ok, reason, msg := lifecycle.Initialized(node, registeredNC)
		if ok {
			nc, err := a.cluster.NodeClaim(ctx, l.NodeClaim)
			if apierrors.IsNotFound(err) {
				return workflows.NodeReady{}, gone(err)
			}
			if err != nil {
				return workflows.NodeReady{}, err
			}
			if nc.DeletionTimestamp != nil {
				return workflows.NodeReady{}, gone(nil)
			}
			if err := a.initialize(ctx, nc, node); err != nil {
				return workflows.NodeReady{}, err
			}
			a.metrics.NodeClaimRegistered(nc.Labels[apiv1.LabelNodePool], l.Instance.InstanceType, l.Instance.CapacityType, l.Instance.Zone)
			log.Info("node ready", zap.String("node", node.Name))
			return workflows.NodeReady{NodeName: node.Name}, nil
		}
		if a.openLate(ctx, node, &closedSince) {
			log.Warn("node opened by its NodeClaim's workflow: the pods it was launched for were not all pointed at it in time",
				zap.String("node", node.Name), zap.Duration("closedFor", a.openingDeadline))
		}
		if reason != lastReason {
			// Say what initialization waits for (one write per change).
			conds := apiv1.SetCondition(registeredNC.Status.Conditions, metav1.Condition{Type: apiv1.ConditionInitialized,
				Status: metav1.ConditionUnknown, Reason: reason, Message: msg}, metav1.Now())
			err := a.cluster.PatchNodeClaimStatus(ctx, l.NodeClaim, mustJSON(map[string]interface{}{"status": map[string]interface{}{"conditions": conds}}))
			if apierrors.IsNotFound(err) {
				return workflows.NodeReady{}, gone(err)
			}
			if err == nil {
				registeredNC.Status.Conditions, lastReason = conds, reason
			}
		}
		if err := wait(); err != nil {
			return workflows.NodeReady{}, err
		}
	}
}

// openLate opens a Ready node still closed (lifecycle.OpeningTaint)
// openingDeadline after this attempt first saw it so: the scheduler hints
// (the leader's controller) open it once its pods are pointed at it, and a
// node must not stay closed when they cannot (the leader is gone, or its
// writes keep failing). It reports whether it opened the node.
func (a *Lifecycle) openLate(ctx context.Context, node *corev1.Node, closedSince *time.Time) bool {
	if !lifecycle.Opening(node) || !lifecycle.Ready(node) {
		*closedSince = time.Time{}
		return false
	}
	if closedSince.IsZero() {
		*closedSince = time.Now()
	}
	if time.Since(*closedSince) < a.openingDeadline {
		return false
	}
	opened := false
	err := a.cluster.UpdateNode(ctx, node.Name, func(n *corev1.Node) bool { opened = lifecycle.EndOpening(n); return opened })
	return err == nil && opened
}

// register makes the Node agree with the NodeClaim (lifecycle.SyncNode,
// written with an update retried on conflict, so what the kubelet wrote
// meanwhile is kept) and records it on the NodeClaim (nodeName,
// Registered). nc's conditions are updated in place.
func (a *Lifecycle) register(ctx context.Context, nc *apiv1.NodeClaim, n *corev1.Node) error {
	hold := a.hinting() && nc.Annotations[capacity.AnnotationNominatedPods] != ""
	err := a.cluster.UpdateNode(ctx, n.Name, func(cur *corev1.Node) bool {
		held := hold && lifecycle.HoldOpening(cur) // before SyncNode labels it registered
		return lifecycle.SyncNode(cur, nc) || held
	})
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.Name, err)
	}
	nc.Status.Conditions = apiv1.SetCondition(nc.Status.Conditions, metav1.Condition{Type: apiv1.ConditionRegistered, Status: metav1.ConditionTrue,
		Reason: apiv1.ReasonRegistered, Message: "node " + n.Name}, metav1.Now())
	err = a.cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{
		"nodeName": n.Name, "conditions": nc.Status.Conditions,
	}}))
	if err == nil {
		a.learnSize(nc, n)
	}
	return err
}

// learnSize keeps the memory a registered node reports for its type and
// image, so later plans size the type as the node does (the estimate
// may be off either way).
func (a *Lifecycle) learnSize(nc *apiv1.NodeClaim, n *corev1.Node) {
	typ := n.Labels[apiv1.LabelInstanceType]
	mem := n.Status.Capacity.Memory()
	if typ == "" || mem.IsZero() {
		return
	}
	if a.types.Market.LearnNodeMemory(typ, nc.Status.ImageID, mem.Value()) {
		a.log.Info("node memory learned", zap.String("instanceType", typ), zap.String("image", nc.Status.ImageID),
			zap.String("memory", mem.String()), zap.String("node", n.Name))
	}
}

func (a *Lifecycle) initialize(ctx context.Context, nc *apiv1.NodeClaim, n *corev1.Node) error {
	if err := a.cluster.LabelNode(ctx, n.Name, map[string]string{apiv1.LabelNodeInitialized: "true"}); err != nil {
		return fmt.Errorf("label node %s initialized: %w", n.Name, err)
	}
	now := metav1.Now()
	conds := apiv1.SetCondition(nc.Status.Conditions, metav1.Condition{Type: apiv1.ConditionRegistered, Status: metav1.ConditionTrue,
		Reason: apiv1.ReasonRegistered, Message: "node " + n.Name}, now)
	conds = apiv1.SetCondition(conds, metav1.Condition{Type: apiv1.ConditionInitialized, Status: metav1.ConditionTrue,
		Reason: apiv1.ReasonInitialized, Message: "node Ready, startup taints removed, requested resources registered"}, now)
	conds = apiv1.SetCondition(conds, metav1.Condition{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}, now)
	return a.cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{
		"nodeName": n.Name, "conditions": conds,
	}}))
}

// TerminateInstance terminates the instance (one EC2 does not show yet is
// waited for: terminateLaunched) and waits until EC2 reports it
// terminated (heartbeating); then, unless InstanceOnly, it releases and
// deletes the Node (named, or found by the instance's provider ID) and the
// NodeClaim, Joinery's finalizer removed from each first. Every step
// tolerates an already-finished step, so retries are safe.
func (a *Lifecycle) TerminateInstance(ctx context.Context, r workflows.TerminateRequest) error {
	if r.InstanceID != "" {
		if err := a.terminateLaunched(ctx, r); err != nil {
			return err
		}
		// Shutting down takes EC2 a minute or two: polls back off from
		// 500 ms to 5 s (EC2's advice), and concurrent ones share calls.
		for wait := 500 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
			activity.RecordHeartbeat(ctx)
			start := time.Now()
			inst, err := a.cloud.Get(ctx, r.InstanceID)
			a.metrics.CloudProviderCall(metrics.ControllerLifecycle, metrics.MethodGet, time.Since(start).Seconds(), err != nil, cloudProviderError(err))
			if aws.IsNotFound(err) || (err == nil && inst.State == aws.StateTerminated) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
	if r.InstanceOnly {
		activityLogger(ctx, a.log).Info("instance terminated", zap.String("nodeclaim", r.NodeClaim), zap.String("instance", r.InstanceID))
		return nil
	}
	name := r.NodeName
	if name == "" {
		if n := a.cluster.NodeOfInstance(r.InstanceID); n != nil {
			name = n.Name
		}
	}
	if name != "" {
		if err := a.cluster.DeleteNode(ctx, name); err != nil {
			return err
		}
	}
	nc, _ := a.cluster.NodeClaim(ctx, r.NodeClaim)
	if err := a.cluster.DeleteNodeClaim(ctx, r.NodeClaim); err != nil {
		return err
	}
	a.nodeClaimEnded(nc, r.Reason, name != "")
	activityLogger(ctx, a.log).Info("nodeclaim terminated", zap.String("nodeclaim", r.NodeClaim), zap.String("instance", r.InstanceID), zap.String("reason", r.Reason))
	return nil
}

// DeleteNodeClaim deletes the NodeClaim object (no instance exists), which
// releases the pods nominated to it.
func (a *Lifecycle) DeleteNodeClaim(ctx context.Context, r workflows.TerminateRequest) error {
	return a.cluster.DeleteNodeClaim(ctx, r.NodeClaim)
}

// RecordEvent records a Kubernetes Event on a NodeClaim or a Node.
func (a *Lifecycle) RecordEvent(_ context.Context, e workflows.EventRequest) error {
	typ := corev1.EventTypeNormal
	if e.Type == corev1.EventTypeWarning {
		typ = corev1.EventTypeWarning
	}
	ref := &corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: e.NodeClaim}
	if e.Node != "" {
		ref = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: e.Node, UID: types.UID(e.Node)}
	}
	a.cluster.Recorder.Event(ref, typ, e.Reason, e.Message)
	return nil
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain maps and API types are marshalled here
	}
	return b
}

// shapeOf is the node shape of an instance type under a NodeClaim's NodeClass.
func (a *Lifecycle) shapeOf(nc *apiv1.NodeClaim, instanceType string) (catalog.NodeShape, bool) {
	it, ok := a.types.Get(instanceType)
	if !ok {
		return catalog.NodeShape{}, false
	}
	launch, _ := a.pools.claimLaunch(nc)
	return it.ShapeOf(launch), true
}
