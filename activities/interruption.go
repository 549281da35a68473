package activities

import (
	"context"
	"strings"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// LookupInterruptedInstance finds the NodeClaim (by status.providerID) and
// Node of an instance, with its pool labels and any disruption already
// under way. An instance of no NodeClaim gives an empty target.
func (a *Interruption) LookupInterruptedInstance(_ context.Context, instanceID string) (workflows.InterruptionTarget, error) {
	var t workflows.InterruptionTarget
	suffix := "/" + instanceID
	var nc *apiv1.NodeClaim
	for _, c := range a.cluster.NodeClaims() {
		if strings.HasSuffix(c.Status.ProviderID, suffix) {
			nc = c
			break
		}
	}
	if nc == nil {
		return t, nil
	}
	t.NodeClaim = nc.Name
	t.NodePool = nc.Labels[apiv1.LabelNodePool]
	t.InstanceType, t.Zone, t.CapacityType = nc.Labels[apiv1.LabelInstanceType], nc.Labels[apiv1.LabelZone], nc.Labels[apiv1.LabelCapacityType]
	t.CapacityReservationID = nc.Labels[apiv1.LabelCapacityReservationID]
	node := a.cluster.NodeByProviderID(nc.Status.ProviderID)
	if node == nil && nc.Status.NodeName != "" {
		node, _ = a.cluster.Nodes.Get(nc.Status.NodeName)
	}
	if node != nil {
		t.NodeName = node.Name
		if a.pseudonym != nil {
			t.NodeRef = a.pseudonym(node.Name)
		}
		if t.InstanceType == "" {
			t.InstanceType = node.Labels[apiv1.LabelInstanceType]
		}
		if t.Zone == "" {
			t.Zone = node.Labels[apiv1.LabelZone]
		}
		if t.CapacityType == "" {
			t.CapacityType = node.Labels[apiv1.LabelCapacityType]
		}
	}
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionDisruptionReason && c.Status == metav1.ConditionTrue {
			t.DisruptingFor = c.Message
			if t.DisruptingFor == "" {
				t.DisruptingFor = c.Reason
			}
		}
	}
	if nc.DeletionTimestamp != nil && t.DisruptingFor == "" {
		t.DisruptingFor = "NodeClaim is being deleted"
	}
	return t, nil
}

// MarkOfferingUnavailable puts an offering in the ICE cache for its TTL, so
// the solver plans no capacity there meanwhile (the pool a spot
// interruption is taking capacity back from).
func (a *Interruption) MarkOfferingUnavailable(_ context.Context, o saga.Offering) error {
	if o.ReservationID != "" {
		// A reservation reclaimed by its owner: nothing left in it until
		// EC2 reports a new count (the other reservations stay).
		a.market.ReservationUsedUp(o.ReservationID)
		a.log.Info("capacity reservation marked used up after an interruption", zap.String("reservation", o.ReservationID))
		return nil
	}
	a.ice.MarkUnavailable(o.InstanceType, o.Zone, o.CapacityType)
	a.log.Info("offering marked unavailable after an interruption", zap.String("instanceType", o.InstanceType),
		zap.String("zone", o.Zone), zap.String("capacityType", o.CapacityType))
	return nil
}

// RecordInterruption records what an interruption made Joinery do: a
// Kubernetes Event on the Node and the NodeClaim, a log line and
// joinery_interruption_actions_total{action}.
func (a *Interruption) RecordInterruption(ctx context.Context, n workflows.InterruptionNote) error {
	typ := corev1.EventTypeWarning
	if n.Action == workflows.ActionNoAction {
		typ = corev1.EventTypeNormal
	}
	reason := interruptionEventReason(n.Kind)
	msg := n.Message + " (instance " + n.InstanceID + ", event " + n.EventID + ")"
	if n.NodeName != "" {
		a.cluster.Recorder.Event(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.NodeName, UID: types.UID(n.NodeName)}, typ, reason, msg)
	}
	if n.NodeClaim != "" {
		a.cluster.Recorder.Event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: n.NodeClaim}, typ, reason, msg)
	}
	pool := ""
	if n.NodeClaim != "" {
		if nc, err := a.cluster.NodeClaim(ctx, n.NodeClaim); err == nil {
			pool = nc.Labels[apiv1.LabelNodePool]
		}
	}
	a.metrics.InterruptionActed(n.Action, pool)
	a.log.Info("interruption", zap.String("kind", n.Kind), zap.String("action", n.Action), zap.String("instance", n.InstanceID),
		zap.String("node", n.NodeName), zap.String("nodeclaim", n.NodeClaim), zap.String("event", n.EventID), zap.String("message", n.Message))
	return nil
}

// interruptionEventReason is the Event reason per kind (Karpenter's names).
func interruptionEventReason(kind string) string {
	switch kind {
	case saga.KindSpotInterrupted:
		return "SpotInterrupted"
	case saga.KindCapacityReservationInterrupted:
		return "CapacityReservationInstanceInterrupted"
	case saga.KindCapacityBlockExpiring:
		return "CapacityBlockExpiring"
	case saga.KindRebalanceRecommendation:
		return "SpotRebalanceRecommendation"
	case saga.KindScheduledChange:
		return "InstanceScheduledChange"
	case saga.KindInstanceStopped:
		return "InstanceStopping"
	case saga.KindInstanceTerminated:
		return "InstanceTerminating"
	}
	return "Interruption"
}
