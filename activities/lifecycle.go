package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/cloud"
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
func (a *Activities) MarkNodeClaimLaunched(ctx context.Context, l workflows.NodeClaimLaunched) error {
	nc, err := a.Cluster.NodeClaim(ctx, l.NodeClaim)
	if apierrors.IsNotFound(err) {
		return temporal.NewNonRetryableApplicationError("NodeClaim deleted", workflows.ErrNodeClaimGone, err)
	}
	if err != nil {
		return err
	}
	lbl := map[string]string{
		apiv1.LabelZone: l.Instance.Zone, apiv1.LabelCapacityType: l.Instance.CapacityType,
	}
	if it, ok := a.Catalog.Get(l.Instance.InstanceType); ok {
		for k, v := range it.Labels() {
			lbl[k] = v
		}
	}
	meta := map[string]interface{}{"labels": lbl, "annotations": launchedAnnotations(l.Instance)}
	if err := a.Cluster.PatchNodeClaim(ctx, l.NodeClaim, mustJSON(map[string]interface{}{"metadata": meta})); err != nil {
		return err
	}
	status := map[string]interface{}{
		"providerID": l.Instance.ProviderID,
		"imageID":    l.Instance.ImageID,
		"conditions": setCondition(nc.Status.Conditions, apiv1.ConditionLaunched, "Launched", "instance "+l.Instance.ID),
	}
	if shape, ok := a.shapeOf(nc, l.Instance.InstanceType); ok {
		status["capacity"] = shape.Capacity.ToResourceList()
		status["allocatable"] = shape.Allocatable.ToResourceList()
	}
	return a.Cluster.PatchNodeClaimStatus(ctx, l.NodeClaim, mustJSON(map[string]interface{}{"status": status}))
}

// WaitForNodeReady heartbeats until the instance's Node has registered, is
// Ready and has no startup taint left. On registration it labels the Node
// karpenter.sh/registered, removes the unregistered taint and records the
// node on the NodeClaim (Registered); once ready it labels
// karpenter.sh/initialized and sets Initialized and Ready. The workflow's
// schedule-to-close timeout is the registration TTL.
func (a *Activities) WaitForNodeReady(ctx context.Context, l workflows.NodeClaimLaunched) (workflows.NodeReady, error) {
	log := a.logger(ctx).With(zap.String("nodeclaim", l.NodeClaim), zap.String("instance", l.Instance.ID))
	var registeredNC *apiv1.NodeClaim // the NodeClaim as read when its node registered
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		activity.RecordHeartbeat(ctx)
		// Poll the informer caches; read the NodeClaim from the API server
		// only to act on it (its conditions are patched from that copy) or
		// to confirm it is gone. A GET every 250 ms per launching claim was
		// hundreds of requests a second at a few thousand pending pods. The
		// startup taints to wait out are the spec's, read at registration.
		node := a.Cluster.NodeByProviderID(l.Instance.ProviderID)
		cached := a.Cluster.HasNodeClaim(l.NodeClaim)
		act := node != nil && cached && (registeredNC == nil || (nodeReady(node) && !hasStartupTaint(node, registeredNC)))
		if cached && !act {
			select {
			case <-ctx.Done():
				return workflows.NodeReady{}, ctx.Err()
			case <-tick.C:
			}
			continue
		}
		nc, err := a.Cluster.NodeClaim(ctx, l.NodeClaim)
		if apierrors.IsNotFound(err) {
			return workflows.NodeReady{}, temporal.NewNonRetryableApplicationError("NodeClaim deleted", workflows.ErrNodeClaimGone, err)
		}
		if node != nil && err == nil {
			if registeredNC == nil {
				if err := a.register(ctx, nc, node); err != nil {
					return workflows.NodeReady{}, err
				}
				registeredNC = nc
				log.Info("node registered", zap.String("node", node.Name))
			}
			if nodeReady(node) && !hasStartupTaint(node, nc) {
				if err := a.initialize(ctx, nc, node); err != nil {
					return workflows.NodeReady{}, err
				}
				if a.Metrics != nil {
					a.Metrics.NodeClaimsRegistered.WithLabelValues(nc.Labels[apiv1.LabelNodePool], l.Instance.InstanceType, l.Instance.CapacityType, l.Instance.Zone).Inc()
				}
				log.Info("node ready", zap.String("node", node.Name))
				return workflows.NodeReady{NodeName: node.Name}, nil
			}
		}
		select {
		case <-ctx.Done():
			return workflows.NodeReady{}, ctx.Err()
		case <-tick.C:
		}
	}
}

func hasStartupTaint(n *corev1.Node, nc *apiv1.NodeClaim) bool {
	for _, st := range nc.Spec.StartupTaints {
		for _, t := range n.Spec.Taints {
			if t.Key == st.Key && t.Effect == st.Effect {
				return true
			}
		}
	}
	return hasTaint(n.Spec.Taints, apiv1.TaintKeyUnregistered)
}

func (a *Activities) register(ctx context.Context, nc *apiv1.NodeClaim, n *corev1.Node) error {
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != apiv1.TaintKeyUnregistered {
			taints = append(taints, t)
		}
	}
	patch := map[string]interface{}{
		"metadata": map[string]interface{}{"labels": map[string]string{apiv1.LabelNodeRegistered: "true"}},
		"spec":     map[string]interface{}{"taints": taints},
	}
	if _, err := a.Cluster.Kube.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, mustJSON(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s registered: %w", n.Name, err)
	}
	return a.Cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{
		"nodeName":   n.Name,
		"conditions": setCondition(nc.Status.Conditions, apiv1.ConditionRegistered, "Registered", "node "+n.Name),
	}}))
}

func (a *Activities) initialize(ctx context.Context, nc *apiv1.NodeClaim, n *corev1.Node) error {
	patch := mustJSON(map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]string{apiv1.LabelNodeInitialized: "true"}}})
	if _, err := a.Cluster.Kube.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s initialized: %w", n.Name, err)
	}
	conds := setCondition(nc.Status.Conditions, apiv1.ConditionRegistered, "Registered", "node "+n.Name)
	conds = setCondition(conds, apiv1.ConditionInitialized, "Initialized", "node Ready, startup taints removed")
	conds = setCondition(conds, apiv1.ConditionReady, "Ready", "")
	return a.Cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{
		"nodeName": n.Name, "conditions": conds,
	}}))
}

// TerminateInstance terminates the instance, waits until EC2 reports it
// terminated (heartbeating), then deletes the Node and the NodeClaim.
// Every step tolerates an already-finished step, so retries are safe.
func (a *Activities) TerminateInstance(ctx context.Context, r workflows.TerminateRequest) error {
	if r.InstanceID != "" {
		if err := a.Cloud.Terminate(ctx, r.InstanceID); err != nil {
			return err
		}
		for {
			activity.RecordHeartbeat(ctx)
			inst, err := a.Cloud.Get(ctx, r.InstanceID)
			if cloud.IsNotFound(err) || (err == nil && inst.State == cloud.StateTerminated) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	if r.NodeName != "" {
		err := a.Cluster.Kube.CoreV1().Nodes().Delete(ctx, r.NodeName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	pool := ""
	if nc, err := a.Cluster.NodeClaim(ctx, r.NodeClaim); err == nil {
		pool = nc.Labels[apiv1.LabelNodePool]
	}
	if err := a.Cluster.DeleteNodeClaim(ctx, r.NodeClaim); err != nil {
		return err
	}
	if a.Metrics != nil {
		a.Metrics.NodeClaimsTerminated.WithLabelValues(pool, r.Reason).Inc()
	}
	a.logger(ctx).Info("nodeclaim terminated", zap.String("nodeclaim", r.NodeClaim), zap.String("instance", r.InstanceID), zap.String("reason", r.Reason))
	return nil
}

// DeleteNodeClaim deletes the NodeClaim object (no instance exists), which
// releases the pods nominated to it.
func (a *Activities) DeleteNodeClaim(ctx context.Context, r workflows.TerminateRequest) error {
	return a.Cluster.DeleteNodeClaim(ctx, r.NodeClaim)
}

// RecordEvent records a Kubernetes Event on a NodeClaim or a Node.
func (a *Activities) RecordEvent(_ context.Context, e workflows.EventRequest) error {
	typ := corev1.EventTypeNormal
	if e.Type == corev1.EventTypeWarning {
		typ = corev1.EventTypeWarning
	}
	ref := &corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: e.NodeClaim}
	if e.Node != "" {
		ref = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: e.Node, UID: types.UID(e.Node)}
	}
	a.Cluster.Recorder.Event(ref, typ, e.Reason, e.Message)
	return nil
}

// setCondition returns conds with condition typ set True.
func setCondition(conds []metav1.Condition, typ, reason, msg string) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(conds)+1)
	for _, c := range conds {
		if c.Type != typ {
			out = append(out, c)
		} else if c.Status == metav1.ConditionTrue {
			return conds
		}
	}
	return append(out, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()})
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain maps and API types are marshalled here
	}
	return b
}
