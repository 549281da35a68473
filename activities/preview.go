package activities

import (
	"context"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
)

// The cluster as the controller reads it, for offline tools (preview/live):
// read from the caches, writing nothing.

// DisruptionClaims are the disruption claims as the consolidation pass
// reads them at now.
func (a *Activities) DisruptionClaims(now time.Time) []disruption.Claim {
	return a.Disruption.disruptionClaims(context.Background(), now)
}

// PlanningInput is the solver input the controller would plan over at now
// with these NodePools and EC2NodeClasses, existing nodes priced; skipped
// are the pools left out and why.
func (a *Activities) PlanningInput(now time.Time, pools []*apiv1.NodePool, classOf func(string) (*apiv1.EC2NodeClass, error)) (in solver.Input, skipped []kube.InvalidNodePool) {
	s, skipped := a.snapshots.build(now, pools, classOf)
	a.snapshots.priceNodes(s)
	return s.input, skipped
}

// PoolNodes counts a NodePool's nodes and those being disrupted.
func (a *Activities) PoolNodes(pool string) disruption.PoolNodes { return a.pools.nodeCount(pool, "") }
