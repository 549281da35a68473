package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/joinery/joinery/policy/staticpool"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
)

// planStatic writes in.Count NodeClaims of the static NodePool
// in.StaticPool and returns their sagas for Provision to start (a plan
// activity, so the NodeClaims and their sagas are one durable step). They
// are planned by the solver as provisioning plans (the same requirements,
// offerings, DaemonSet overhead and minValues): Count virtual pods that
// request one pod slot, each on its own node (required hostname
// anti-affinity), spread over zones (ScheduleAnyway, counting the pool's
// other NodeClaims), in the pool alone, so each gets the pool's cheapest
// instance types (staticpool.Input). Fewer planned than asked is reported
// as unschedulable with the solver's reasons; the written ones launch.
func (a *Provisioning) planStatic(ctx context.Context, in workflows.ProvisionInput) (workflows.ProvisionPlan, error) {
	var out workflows.ProvisionPlan
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil || in.Count <= 0 {
		return out, err
	}
	snap, err := a.snapshots.take(ctx, time.Now())
	if err != nil {
		return out, err
	}
	sp, ok := snap.static[in.StaticPool]
	if !ok {
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"static NodePool %s cannot launch now (not found, invalid, or its EC2NodeClass is not Ready)", in.StaticPool), ErrStaticPoolUnavailable, nil)
	}
	si := staticpool.Input(sp, a.cluster.NodeClaims(), in.Count)
	si.DaemonSets, si.NamespaceLabels, si.Budget = snap.input.DaemonSets, snap.input.NamespaceLabels, a.solverBudget
	plan := solver.Solve(si)
	if batch == "" {
		batch = "static-" + randomSuffix()
	}
	var names []string
	for _, nn := range plan.NewNodeClaims {
		name, input, err := a.writeCapacity(ctx, snap, batch, nn, in.StaticPool, "static", &out)
		if err != nil {
			return out, err
		}
		names = append(names, name)
		activityLogger(ctx, a.log).Info("static nodeclaim planned", zap.String("nodeclaim", name), zap.String("nodepool", in.StaticPool),
			zap.String("cheapest", input.Offerings[0].InstanceType), zap.Float64("usdPerHour", nn.Price()))
	}
	if err := a.cluster.WaitNodeClaimsCached(ctx, names, cacheWait); err != nil {
		return out, err
	}
	for _, u := range plan.Unschedulable {
		out.UnschedulableTotal++
		if len(out.Unschedulable) < workflows.MaxUnschedulableListed {
			out.Unschedulable = append(out.Unschedulable, in.StaticPool+": "+u.Reason)
		}
	}
	if out.UnschedulableTotal > 0 {
		activityLogger(ctx, a.log).Warn("static nodepool short of nodes", zap.String("nodepool", in.StaticPool),
			zap.Int("planned", len(out.NodeClaims)), zap.Int("asked", in.Count), zap.Strings("why", out.Unschedulable))
	}
	return out, nil
}

// ErrStaticPoolUnavailable is the error type of a static launch for a pool
// that cannot launch now (the reconciler's next pass tries again).
const ErrStaticPoolUnavailable = "StaticPoolUnavailable"

// writeCapacity writes a NodeClaim planned for no pod (a static pool's
// replica, a recorded node recreated: nothing is nominated to it) and adds
// it to out, counted as created by why in pool.
func (a *Provisioning) writeCapacity(ctx context.Context, snap *snapshot, batch string, nn solver.NewNodeClaim, pool, why string,
	out *workflows.ProvisionPlan) (string, workflows.NodeClaimInput, error) {
	nn.Pods = nil
	nc, input, err := a.claims.write(ctx, snap, batch, nn)
	if err != nil {
		return "", input, err
	}
	out.NodeClaims = append(out.NodeClaims, input)
	out.PlannedUSDPerHour += nn.Price()
	a.metrics.NodeClaimCreatedBy(pool, why, false)
	return nc.Name, input, nil
}
