package activities

import (
	"context"
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/staticpool"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
)

// planRecreate writes NodeClaims of the shapes asked (a replay's
// --rebalance-only: the recorded cluster's nodes, bought as it bought
// them, for consolidation to work on) and returns their sagas. Each shape
// is planned as a static launch (staticpool.Input) in a copy of a NodePool
// pinned to its instance type, zone and capacity type: the named pool
// first, else the first that can hold it, so the NodeClaims carry a
// pool's template, class and disruption settings. Shapes no pool can hold
// are reported unschedulable.
func (a *Provisioning) planRecreate(ctx context.Context, shapes []workflows.RecreateNodes) (workflows.ProvisionPlan, error) {
	var out workflows.ProvisionPlan
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil {
		return out, err
	}
	snap, err := a.snapshots.take(ctx, time.Now())
	if err != nil {
		return out, err
	}
	if batch == "" {
		batch = "recreate-" + randomSuffix()
	}
	var names []string
	for _, s := range shapes {
		planned := a.solveRecreate(snap, s)
		for _, nn := range planned {
			name, _, err := a.writeCapacity(ctx, snap, batch, nn, nn.NodePool, "recreated", &out)
			if err != nil {
				return out, err
			}
			names = append(names, name)
		}
		if short := s.Count - len(planned); short > 0 {
			out.UnschedulableTotal += short
			why := fmt.Sprintf("%d of %d %s %s in %s: no NodePool can launch them", short, s.Count, s.CapacityType, s.InstanceType, s.Zone)
			out.Unschedulable = append(out.Unschedulable, why)
			activityLogger(ctx, a.log).Warn("nodes not recreated", zap.String("why", why))
		}
	}
	return out, a.cluster.WaitNodeClaimsCached(ctx, names, cacheWait)
}

// solveRecreate plans s.Count nodes of shape s in the first pool that
// plans any.
func (a *Provisioning) solveRecreate(snap *snapshot, s workflows.RecreateNodes) []solver.NewNodeClaim {
	pools := snap.input.NodePools
	for i, p := range pools {
		if p.Name == s.NodePool && i > 0 {
			pools = append([]solver.NodePool{p}, append(append([]solver.NodePool(nil), pools[:i]...), pools[i+1:]...)...)
			break
		}
	}
	for _, p := range pools {
		si := staticpool.Input(pinned(p, s), nil, s.Count)
		si.DaemonSets, si.NamespaceLabels, si.Budget = snap.input.DaemonSets, snap.input.NamespaceLabels, a.solverBudget
		if plan := solver.Solve(si); len(plan.NewNodeClaims) > 0 {
			return plan.NewNodeClaims
		}
	}
	return nil
}

// pinned is pool p narrowed to shape s's instance type, zone and capacity
// type (its minValues dropped: one type is asked for).
func pinned(p solver.NodePool, s workflows.RecreateNodes) solver.NodePool {
	reqs := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(p.Requirements)+3)
	for _, r := range p.Requirements {
		r.MinValues = nil
		reqs = append(reqs, r)
	}
	for _, kv := range [][2]string{{apiv1.LabelInstanceType, s.InstanceType}, {apiv1.LabelZone, s.Zone}, {apiv1.LabelCapacityType, s.CapacityType}} {
		if kv[1] != "" {
			reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: kv[0], Operator: "In", Values: []string{kv[1]}})
		}
	}
	p.Requirements = reqs
	return p
}
