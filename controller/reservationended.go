package controller

import (
	"context"
	"encoding/json"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// reservationEndEvery is how often reserved nodes are checked against
// EC2 (Karpenter's capacityreservation.capacitytype controller: every
// minute).
const reservationEndEvery = time.Minute

// reservationEndWatcher relabels the nodes whose capacity reservation
// ended (expired or cancelled): EC2 runs their instances on as On-Demand
// capacity, so their NodeClaim and Node say karpenter.sh/capacity-type
// on-demand without the reservation labels, as Karpenter's
// capacityreservation.capacitytype controller does; pricing, the
// reservations' counts and consolidation then see an on-demand node.
type reservationEndWatcher struct {
	cl        *kube.Cluster
	instances func(ctx context.Context, ids []string) (map[string]aws.Instance, error)
	log       *zap.Logger
}

func (w *reservationEndWatcher) run(ctx context.Context) {
	reconcileLoop(ctx, reservationEndEvery, nil, 0, func(ctx context.Context, _ time.Time) { w.check(ctx) })
}

// check looks the reserved NodeClaims' instances up (batched) and
// relabels those EC2 no longer runs in a reservation.
func (w *reservationEndWatcher) check(ctx context.Context) {
	byInstance := map[string]*apiv1.NodeClaim{}
	var ids []string
	for _, nc := range w.cl.NodeClaims() {
		id := gc.InstanceID(nc.Status.ProviderID)
		if nc.DeletionTimestamp != nil || id == "" || nc.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeReserved {
			continue // a deleting node drains anyway
		}
		byInstance[id] = nc
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return
	}
	found, err := w.instances(ctx, ids)
	if err != nil {
		w.log.Warn("could not look up reserved nodes' instances", zap.Error(err))
		return
	}
	for _, id := range ids {
		if inst, ok := found[id]; ok {
			w.relabel(ctx, byInstance[id], inst)
		}
	}
}

// relabel moves one NodeClaim, and its registered Node, out of its
// reservation when its instance has left it.
func (w *reservationEndWatcher) relabel(ctx context.Context, nc *apiv1.NodeClaim, inst aws.Instance) {
	labels := nodeclass.OutOfReservation(nc.Labels, inst.CapacityType)
	if labels == nil {
		return
	}
	log := w.log.With(zap.String("nodeclaim", nc.Name), zap.String("instance", inst.ID), zap.String("reservation", nc.Labels[apiv1.LabelCapacityReservationID]))
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err := w.cl.PatchNodeClaim(ctx, nc.Name, patch); err != nil && !apierrors.IsNotFound(err) {
		log.Warn("could not relabel a NodeClaim whose reservation ended", zap.Error(err))
		return
	}
	if node, err := w.cl.Nodes.Get(nc.Status.NodeName); err == nil && node.Labels[apiv1.LabelNodeRegistered] == "true" {
		// Before registration its labels are synced from the NodeClaim.
		if nl := nodeclass.OutOfReservation(node.Labels, inst.CapacityType); nl != nil {
			if err := w.cl.PatchNodeLabels(ctx, node.Name, nl); err != nil {
				log.Warn("could not relabel a Node whose reservation ended", zap.String("node", node.Name), zap.Error(err))
				return
			}
		}
	}
	log.Info("capacity reservation ended: the node runs as on-demand capacity now")
}
