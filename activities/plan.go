package activities

import (
	"context"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
)

// MaxOfferingsPerNodeClaim bounds the offerings a NodeClaim saga carries in
// its history (see workflows.MaxOfferingsPerNodeClaim).
const MaxOfferingsPerNodeClaim = saga.MaxOfferingsPerNodeClaim

// MaxInstanceTypesPerNodeClaim bounds the instance-type requirement written
// on a NodeClaim (Karpenter truncates to 60 at launch).
const MaxInstanceTypesPerNodeClaim = 60

// cacheWait bounds how long a plan waits for its NodeClaims to reach the
// informer cache before it fails and is retried.
const cacheWait = 10 * time.Second

// PlanProvisioning snapshots the cluster, solves, writes one NodeClaim
// object per new node (with the pods nominated to it), and reports pods no
// node can hold with an Event on the pod and a log line. It returns the
// NodeClaim sagas to start.
func (a *Provisioning) PlanProvisioning(ctx context.Context, in workflows.ProvisionInput) (workflows.ProvisionPlan, error) {
	if in.StaticPool != "" {
		return a.planStatic(ctx, in)
	}
	if len(in.Recreate) > 0 {
		return a.planRecreate(ctx, in.Recreate)
	}
	log := activityLogger(ctx, a.log)
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil {
		return workflows.ProvisionPlan{}, err
	}
	began := time.Now()
	snap, err := a.snapshots.take(ctx, began)
	if err != nil {
		return workflows.ProvisionPlan{}, err
	}
	snap.input.Budget = a.solverBudget
	a.metrics.SetQueueDepth(metrics.ControllerProvisioner, in.BatchID, len(snap.input.Pods))
	start := time.Now()
	plan := solver.Solve(snap.input)
	solved := time.Now()
	realUnsched := 0 // capacity buffers' virtual pods aside
	for _, u := range plan.Unschedulable {
		if !snap.virtualKeys[u.Pod] {
			realUnsched++
		}
	}
	a.metrics.Scheduled(metrics.ControllerProvisioner, time.Since(start).Seconds(), realUnsched)
	a.metrics.SetQueueDepth(metrics.ControllerProvisioner, in.BatchID, realUnsched)
	if n := nodeclass.CapReservations(plan.NewNodeClaims, reservationBudget(a.cluster, a.market)); n > 0 {
		log.Info("capacity reservations used up: nodeclaims planned on other offerings", zap.Int("nodeclaims", n))
	}
	a.rememberOutcome(ctx, plan, snap, time.Now())
	out := workflows.ProvisionPlan{PodsConsidered: len(snap.input.Pods), PodsOnExisting: len(plan.ExistingPlacements),
		UnschedulableTotal: len(plan.Unschedulable)}
	if len(plan.NewNodeClaims) > workflows.MaxNodeClaimsPerPlan {
		// The rest are planned again next round, after these start.
		plan.NewNodeClaims, out.More = plan.NewNodeClaims[:workflows.MaxNodeClaimsPerPlan], true
	}
	written, inputs, err := a.writeNodeClaims(ctx, snap, batch, plan.NewNodeClaims)
	if err != nil {
		return out, err
	}
	wrote := time.Now()
	a.followPlacements(ctx, log, plan, snap)
	for i, nn := range plan.NewNodeClaims {
		nc, in := written[i], inputs[i]
		out.NodeClaims = append(out.NodeClaims, in)
		out.PlannedUSDPerHour += nn.Price()
		for _, key := range nn.Pods {
			if p := snap.podsByKey[key]; p != nil {
				a.cluster.Recorder.Eventf(p, corev1.EventTypeNormal, "Nominated", "Pod should schedule on: nodeclaim/%s", nc.Name)
			}
		}
		a.metrics.NodeClaimCreatedBy(nn.NodePool, "provisioned", nn.MinValuesRelaxed)
		log.Info("nodeclaim planned", zap.String("nodeclaim", nc.Name), zap.String("nodepool", nn.NodePool),
			zap.Int("pods", len(nn.Pods)), zap.String("cheapest", in.Offerings[0].InstanceType), zap.Float64("usdPerHour", nn.Price()))
	}
	virtualUnsched := a.reportUnschedulable(log, plan, snap, &out)
	a.headroom.Unschedulable(virtualUnsched, time.Now())
	if snap.virtualPending > 0 {
		log.Info("capacity buffers planned", zap.Int("virtualPods", snap.virtualPending), zap.Int("unschedulable", virtualUnsched))
	}
	log.Info("provisioning plan", zap.Int("pending", snap.pending), zap.Int("nominated", snap.nominated), zap.Int("held", snap.held),
		zap.Int("lapsedWindow", snap.lapsed.Window), zap.Int("lapsedDisplaced", snap.lapsed.Displaced),
		zap.Int("considered", out.PodsConsidered), zap.Int("onExisting", out.PodsOnExisting),
		zap.Int("nodeclaims", len(out.NodeClaims)), zap.Int("unschedulable", len(out.Unschedulable)),
		zap.Float64("usdPerHour", out.PlannedUSDPerHour), zap.Duration("snapshot", start.Sub(began)), zap.Duration("solve", solved.Sub(start)),
		zap.Duration("write", wrote.Sub(solved)), zap.Duration("follow", time.Since(wrote)))
	return out, nil
}

// writeNodeClaims writes the planned NodeClaims concurrently (a big batch
// plans hundreds), in the plan's order, and waits until the cache has them.
func (a *Provisioning) writeNodeClaims(ctx context.Context, snap *snapshot, batch string, planned []solver.NewNodeClaim) ([]*apiv1.NodeClaim, []workflows.NodeClaimInput, error) {
	written := make([]*apiv1.NodeClaim, len(planned))
	inputs := make([]workflows.NodeClaimInput, len(planned))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(nodeClaimWriters)
	for i, nn := range planned {
		g.Go(func() error {
			var err error
			written[i], inputs[i], err = a.claims.write(gctx, snap, batch, nn)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	names := make([]string, len(written))
	for i, nc := range written {
		names[i] = nc.Name
	}
	return written, inputs, a.cluster.WaitNodeClaimsCached(ctx, names, cacheWait)
}

// reportUnschedulable says why each real pod fits nowhere (Event, log,
// metric, the plan's list) and returns how many capacity buffers' virtual
// pods found no room (one log line for all of them, no Event).
func (a *Provisioning) reportUnschedulable(log *zap.Logger, plan solver.Plan, snap *snapshot, out *workflows.ProvisionPlan) int {
	virtualUnsched := 0
	for _, u := range plan.Unschedulable {
		if snap.virtualKeys[u.Pod] {
			// A buffer's virtual pod: one log line for all (no Event, no
			// pod counted unschedulable).
			if virtualUnsched == 0 {
				log.Warn("capacity buffer cannot be provisioned in full", zap.String("virtualPod", u.Pod), zap.String("reason", u.Reason))
			}
			virtualUnsched++
			out.UnschedulableTotal--
			continue
		}
		if len(snap.notReady) > 0 {
			u.Reason += "; " + strings.Join(snap.notReady, "; ")
		}
		if len(out.Unschedulable) < workflows.MaxUnschedulableListed {
			out.Unschedulable = append(out.Unschedulable, u.Pod+": "+u.Reason)
		}
		if p := snap.podsByKey[u.Pod]; p != nil {
			a.cluster.Recorder.Eventf(p, corev1.EventTypeWarning, "FailedScheduling", "Failed to schedule pod, %s", u.Reason)
		}
		log.Warn("pod cannot be provisioned", zap.String("pod", u.Pod), zap.String("reason", u.Reason))
		a.metrics.PodUnschedulable()
	}
	return virtualUnsched
}
