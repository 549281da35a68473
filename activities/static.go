package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/resources"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labelStaticPool marks the virtual pods a static pool's launches are
// planned for (never written anywhere).
const labelStaticPool = "joinery.sh/static-pool"

// StaticLaunch is a static pool's missing NodeClaims, written: start a
// NodeClaim workflow for each.
type StaticLaunch struct {
	NodeClaims []workflows.NodeClaimInput
	USDPerHour float64
}

// CreateStaticNodeClaims writes n NodeClaims of the static NodePool pool
// and returns their saga inputs. They are planned by the solver as
// provisioning plans (the same requirements, offerings, DaemonSet
// overhead and minValues): n virtual pods that request one pod slot, each
// on its own node (required hostname anti-affinity), spread over zones
// (ScheduleAnyway, counting the pool's other NodeClaims), in the pool
// alone, so each gets the pool's cheapest instance types. Fewer than n
// planned is an error with the solver's reason (the written ones are
// returned too).
func (a *Activities) CreateStaticNodeClaims(ctx context.Context, pool string, n int) (StaticLaunch, error) {
	var out StaticLaunch
	if n <= 0 {
		return out, nil
	}
	snap, err := a.takeSnapshot(ctx, time.Now())
	if err != nil {
		return out, err
	}
	sp, ok := snap.static[pool]
	if !ok {
		return out, fmt.Errorf("static NodePool %s cannot launch now (not found, invalid, or its EC2NodeClass is not Ready)", pool)
	}
	in := staticInput(sp, a.Cluster.NodeClaims(), n)
	in.DaemonSets, in.NamespaceLabels, in.Budget = snap.input.DaemonSets, snap.input.NamespaceLabels, a.SolverBudget
	plan := solver.Solve(in)
	batch := "static-" + randomSuffix()
	for _, nn := range plan.NewNodeClaims {
		nn.Pods = nil // virtual: nothing is nominated
		nc, input, err := a.writeNodeClaim(ctx, snap, batch, nn)
		if err != nil {
			return out, err
		}
		out.NodeClaims = append(out.NodeClaims, input)
		out.USDPerHour += nn.Price()
		a.Metrics.NodeClaimCreatedBy(pool, "static", false)
		a.Log.Info("static nodeclaim planned", zap.String("nodeclaim", nc.Name), zap.String("nodepool", pool),
			zap.String("cheapest", input.Offerings[0].InstanceType), zap.Float64("usdPerHour", nn.Price()))
	}
	if len(out.NodeClaims) < n {
		var why []string
		for _, u := range plan.Unschedulable {
			why = append(why, u.Reason)
			if len(why) == 3 {
				break
			}
		}
		return out, fmt.Errorf("static NodePool %s: %d of %d NodeClaims planned: %s", pool, len(out.NodeClaims), n, strings.Join(why, "; "))
	}
	return out, nil
}

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
