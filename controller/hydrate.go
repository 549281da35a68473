package controller

import (
	"context"
	"encoding/json"

	apiv1 "github.com/joinery/joinery/api/v1"
	"go.uber.org/zap"
)

// hydrate labels the class's NodeClaims, and their Nodes, with the node
// class label (karpenter.k8s.aws/ec2nodeclass) when they lack it: NodeClaims
// written before Joinery set it at creation. Karpenter's NodeClaim and Node
// hydration controllers do the same on upgrade. A failed write is left to
// the next pass.
func (r *nodeClassReconciler) hydrate(ctx context.Context, cls string) {
	for _, nc := range r.cl.NodeClaims() {
		ref := nc.Spec.NodeClassRef
		if ref == nil || ref.Name != cls || nc.DeletionTimestamp != nil {
			continue
		}
		key := apiv1.NodeClassLabelKey(ref)
		if nc.Labels[key] != ref.Name {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{key: ref.Name}}})
			if err := r.cl.PatchNodeClaim(ctx, nc.Name, patch); err != nil {
				r.log.Debug("hydrate nodeclaim", zap.String("nodeclaim", nc.Name), zap.Error(err))
				continue
			}
		}
		if nc.Status.NodeName == "" {
			continue
		}
		if node, err := r.cl.Nodes.Get(nc.Status.NodeName); err != nil || node.Labels[key] == ref.Name {
			continue
		}
		if err := r.cl.LabelNode(ctx, nc.Status.NodeName, map[string]string{key: ref.Name}); err != nil {
			r.log.Debug("hydrate node", zap.String("node", nc.Status.NodeName), zap.Error(err))
		}
	}
}
