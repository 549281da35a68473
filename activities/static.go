package activities

import (
	"context"
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labelStaticPool marks the virtual pods a static pool's launches are
// planned for (never written anywhere).
const labelStaticPool = "joinery.sh/static-pool"

// planStatic writes in.Count NodeClaims of the static NodePool
// in.StaticPool and returns their sagas for Provision to start (a plan
// activity, so the NodeClaims and their sagas are one durable step). They
// are planned by the solver as provisioning plans (the same requirements,
// offerings, DaemonSet overhead and minValues): Count virtual pods that
// request one pod slot, each on its own node (required hostname
// anti-affinity), spread over zones (ScheduleAnyway, counting the pool's
// other NodeClaims), in the pool alone, so each gets the pool's cheapest
// instance types. Fewer planned than asked is reported as unschedulable
// with the solver's reasons; the written ones launch.
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
	si := staticInput(sp, a.cluster.NodeClaims(), in.Count)
	si.DaemonSets, si.NamespaceLabels, si.Budget = snap.input.DaemonSets, snap.input.NamespaceLabels, a.solverBudget
	plan := solver.Solve(si)
	if batch == "" {
		batch = "static-" + randomSuffix()
	}
	var names []string
	for _, nn := range plan.NewNodeClaims {
		nn.Pods = nil // virtual: nothing is nominated
		nc, input, err := a.claims.write(ctx, snap, batch, nn)
		if err != nil {
			return out, err
		}
		names = append(names, nc.Name)
		out.NodeClaims = append(out.NodeClaims, input)
		out.PlannedUSDPerHour += nn.Price()
		a.metrics.NodeClaimCreatedBy(in.StaticPool, "static", false)
		activityLogger(ctx, a.log).Info("static nodeclaim planned", zap.String("nodeclaim", nc.Name), zap.String("nodepool", in.StaticPool),
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

// staticInput is the solver input of n launches of static pool sp: n
// virtual pods and, for the zone spread, one marker pod per NodeClaim the
// pool has (not being deleted) with a known zone.
func staticInput(sp solver.NodePool, claims []*apiv1.NodeClaim, n int) solver.Input {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{labelStaticPool: sp.Name}}
	lbl := map[string]string{labelStaticPool: sp.Name}
	var req resources.List
	req[resources.Pods] = 1
	in := solver.Input{NodePools: []solver.NodePool{sp}}
	for i := 0; i < n; i++ {
		in.Pods = append(in.Pods, solver.Pod{
			Namespace: "joinery-static", Name: fmt.Sprintf("%s-%d", sp.Name, i), UID: fmt.Sprintf("static-%s-%d", sp.Name, i),
			Requests: req, Labels: lbl,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TopologySpread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelZone,
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel}},
			PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: apiv1.LabelHostname, LabelSelector: sel}}},
		})
	}
	for _, nc := range claims {
		zone := nc.Labels[apiv1.LabelZone]
		if nc.Labels[apiv1.LabelNodePool] != sp.Name || nc.DeletionTimestamp != nil || zone == "" {
			continue
		}
		node := nc.Status.NodeName
		if node == "" {
			node = "nodeclaim/" + nc.Name
		}
		in.ExistingPods = append(in.ExistingPods, solver.ExistingPod{
			Pod: solver.Pod{Namespace: "joinery-static", Name: "existing-" + nc.Name, Labels: lbl}, Node: node, Zone: zone})
	}
	return in
}
