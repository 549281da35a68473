package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/joinery/joinery/api/provreq"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/solver"
	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// A gang whose request says joinery.sh/placement: cluster gets one new
// cluster placement group per try: created before the plan (the plan
// names it), every node of the try planned into it in one zone, and
// deleted when the try fails (the workflow) or, after a booking, once its
// nodes are gone (the garbage collector).

// gangGroup creates the try's cluster placement group when the request
// asks for one (nil otherwise); its name is the try's, so a retried plan
// finds the group its earlier attempt created.
func (a *Gang) gangGroup(ctx context.Context, pr *provreq.ProvisioningRequest, try int) (*apiv1.PlacementGroupStatus, error) {
	if p, _ := gang.Placement(pr); p != gang.PlacementCluster {
		return nil, nil
	}
	if a.cloud == nil {
		return nil, errors.New("a cluster placement group needs the EC2 API, which this worker has not")
	}
	name := gang.GroupName(a.cloud.ClusterName(), string(pr.UID), try)
	pg, err := a.cloud.EnsureClusterPlacementGroup(ctx, name, map[string]string{
		apiv1.TagProvisioningRequest: gangKey(pr.Namespace, pr.Name), LabelGangTry: fmt.Sprint(try)})
	if err != nil {
		return nil, fmt.Errorf("cluster placement group for ProvisioningRequest %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	return &pg, nil
}

// dropGroup deletes a try's group its plan did not use (nothing launched
// in it); a failure is left to the garbage collector.
func (a *Gang) dropGroup(ctx context.Context, pg *apiv1.PlacementGroupStatus, log *zap.Logger) {
	if pg == nil {
		return
	}
	if err := a.cloud.DeletePlacementGroup(ctx, pg.Name); err != nil {
		log.Warn("unused gang placement group not deleted (the garbage collector will)", zap.String("placementGroup", pg.Name), zap.Error(err))
		return
	}
	log.Info("unused gang placement group deleted", zap.String("placementGroup", pg.Name))
}

// DeleteGangPlacementGroup deletes a failed try's group once its nodes
// are gone; EC2 refuses while instances are in it (the activity retries,
// and the garbage collector deletes it later if they outlive the retries).
func (a *Gang) DeleteGangPlacementGroup(ctx context.Context, name string) error {
	if err := a.cloud.DeletePlacementGroup(ctx, name); err != nil {
		return err
	}
	activityLogger(ctx, a.log).Info("gang placement group deleted", zap.String("placementGroup", name))
	return nil
}

// gangClassOf looks classes up as a gang launching into pg sees them: pg
// in place of the class's group (a class with its own group is left
// out: an instance is in one group at most).
func gangClassOf(classOf func(string) (*apiv1.EC2NodeClass, error), pg apiv1.PlacementGroupStatus) func(string) (*apiv1.EC2NodeClass, error) {
	return func(name string) (*apiv1.EC2NodeClass, error) {
		cls, err := classOf(name)
		if err != nil {
			return nil, err
		}
		if cls.Spec.PlacementGroupSelector != nil {
			return nil, fmt.Errorf("EC2NodeClass %s has its own placement group (spec.placementGroupSelector): not used for a gang asking for %s=%s",
				name, gang.ParamPlacement, gang.PlacementCluster)
		}
		out := *cls // Status is a value: the copy's group is its own
		out.Status.PlacementGroup = &pg
		return &out, nil
	}
}

// solveGang plans the gang's pods over a snapshot: as any plan without a
// group; with one, every pod held to the group (so to new nodes launched
// into it) and the whole gang to one zone, solved once per zone the pools
// launch in, the cheapest zone that places every pod kept (the first
// zone's plan when none does, for its reasons).
func (a *Gang) solveGang(ctx context.Context, pods []*corev1.Pod, pg *apiv1.PlacementGroupStatus) (*snapshot, solver.Plan, error) {
	if pg == nil {
		snap, err := a.snapshots.take(ctx, time.Now())
		if err != nil {
			return nil, solver.Plan{}, err
		}
		return snap, a.solvePods(snap, pods, a.solverBudget), nil
	}
	pools, _ := a.cluster.NodePools()
	snap, _ := a.snapshots.build(time.Now(), pools, gangClassOf(a.cluster.NodeClass, *pg))
	zones := poolZones(snap.input.NodePools)
	if len(zones) == 0 {
		return snap, a.solvePods(snap, inGroup(pods, pg.ID, ""), a.solverBudget), nil
	}
	budget := a.solverBudget
	if budget > 0 {
		budget = max(budget/time.Duration(len(zones)), 500*time.Millisecond)
	}
	plans := make([]solver.Plan, len(zones))
	scores := make([]gang.ZonePlan, len(zones))
	for i, z := range zones {
		plans[i] = a.solvePods(snap, inGroup(pods, pg.ID, z), budget)
		scores[i] = gang.ZonePlan{Zone: z, OK: len(plans[i].Unschedulable) == 0, Price: plans[i].Price(), Nodes: len(plans[i].NewNodeClaims)}
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, z)
		}
	}
	best := max(gang.PickZone(scores), 0)
	setPods(snap, inGroup(pods, pg.ID, zones[best]))
	activityLogger(ctx, a.log).Info("gang planned in one zone for its cluster placement group", zap.String("placementGroup", pg.Name),
		zap.String("zone", zones[best]), zap.Any("zones", scores))
	return snap, plans[best], nil
}

// solvePods plans pods (in place of the pending ones) over snap.
func (a *Gang) solvePods(snap *snapshot, pods []*corev1.Pod, budget time.Duration) solver.Plan {
	setPods(snap, pods)
	snap.input.Budget = budget
	return solver.Solve(snap.input)
}

func setPods(snap *snapshot, pods []*corev1.Pod) {
	snap.input.Pods = nil
	snap.podsByKey = map[string]*corev1.Pod{}
	for _, p := range pods {
		snap.input.Pods = append(snap.input.Pods, snap.solverPod(p, snap.attached))
		snap.podsByKey[p.Namespace+"/"+p.Name] = p
	}
}

// inGroup are copies of pods held to the placement group's nodes and, when
// zone is set, to that zone.
func inGroup(pods []*corev1.Pod, groupID, zone string) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		c := p.DeepCopy()
		if c.Spec.NodeSelector == nil {
			c.Spec.NodeSelector = map[string]string{}
		}
		c.Spec.NodeSelector[apiv1.LabelPlacementGroupID] = groupID
		if zone != "" {
			c.Spec.NodeSelector[apiv1.LabelZone] = zone
		}
		out[i] = c
	}
	return out
}

// poolZones are the zones the pools have offerings in, sorted.
func poolZones(pools []solver.NodePool) []string {
	var zones []string
	for _, p := range pools {
		for _, it := range p.InstanceTypes {
			for _, o := range it.Offerings {
				if o.Zone != "" && !slices.Contains(zones, o.Zone) {
					zones = append(zones, o.Zone)
				}
			}
		}
	}
	slices.Sort(zones)
	return zones
}
