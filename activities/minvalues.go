package activities

import (
	"fmt"
	"slices"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/minvalues"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
)

// launchOfferings is what one CreateFleet of the NodeClaim tries: the
// saga's offerings of the request's capacity type (its cheapest, at most
// MaxOfferingsPerNodeClaim across capacity types, so a saga's history stays
// small), plus, when the NodeClaim's requirements carry minValues those
// offerings do not meet, every available offering of the request's capacity
// type, in the NodeClaim's zones, of its next-cheapest instance types (its
// instance-type requirement, at most MaxInstanceTypesPerNodeClaim) until
// they do: Karpenter truncates a launch to 60 types only as far as
// minValues allows. When even all of them together cannot meet minValues
// (the insufficient-capacity cache took some since the plan), the launch
// fails with a non-retryable ErrInsufficientCapacity over the request's
// offerings, so the saga tries its other capacity type or gives up. A
// reserved launch is not widened: it targets its reservations as planned
// (minValues holds for the spot and on-demand launches after it).
func (a *Launch) launchOfferings(nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest) ([]saga.Offering, error) {
	if req.CapacityType == apiv1.CapacityTypeReserved {
		return req.Offerings, nil
	}
	mv := minvalues.Of(nc.Spec.Requirements)
	var types []string
	zone := apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelZone, Operator: apiv1.OpExists}
	for _, r := range nc.Spec.Requirements {
		switch {
		case r.Key == apiv1.LabelInstanceType && r.Operator == apiv1.OpIn:
			types = r.Values
		case r.Key == apiv1.LabelZone && r.Operator == apiv1.OpIn:
			zone = r
		}
	}
	if len(mv) == 0 {
		return req.Offerings, nil
	}
	// The saga's types first (its offerings as they are), then the
	// NodeClaim's others, cheapest first.
	var opts []solver.InstanceTypeOption
	index := map[string]int{}
	for _, o := range req.Offerings {
		i, ok := index[o.InstanceType]
		if !ok {
			it, known := a.types.Get(o.InstanceType)
			if known {
				it = it.For(cls)
			}
			if !known || !it.Launchable(cls) {
				continue // launchPlan leaves it out: it counts for nothing
			}
			i = len(opts)
			index[o.InstanceType] = i
			opts = append(opts, solver.InstanceTypeOption{Type: it})
		}
		opts[i].Offerings = append(opts[i].Offerings, catalog.Offering{Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Available: true,
			ReservationID: o.ReservationID})
	}
	var more []solver.InstanceTypeOption
	zones := zonesOf(cls)
	for _, name := range types {
		if _, ok := index[name]; ok {
			continue
		}
		it, ok := a.types.Live().Get(name)
		if !ok {
			continue
		}
		it = it.For(cls)
		if _, ok := nodeclass.AMIFor(cls.Status.AMIs, it.Labels()); !ok || !it.Launchable(cls) {
			continue
		}
		var offs []catalog.Offering
		for _, o := range a.market.Offerings(it, zones) {
			if o.CapacityType == req.CapacityType && zone.Matches(o.Zone, true) && !a.ice.UnavailableIn(placementGroupOf(cls))(name, o.Zone, o.CapacityType) {
				offs = append(offs, o)
			}
		}
		if len(offs) > 0 {
			index[name] = -1
			more = append(more, solver.InstanceTypeOption{Type: it, Offerings: offs})
		}
	}
	add, tried, ok := minvalues.Widen(mv, opts, more, MaxInstanceTypesPerNodeClaim)
	if !ok {
		msg := fmt.Sprintf("NodeClaim %s: the available %s offerings of its %d instance types cannot meet the minValues of %s",
			nc.Name, req.CapacityType, tried, minvalues.Keys(mv))
		return nil, temporal.NewNonRetryableApplicationError(msg, workflows.ErrInsufficientCapacity, nil, req.Offerings)
	}
	out := slices.Clone(req.Offerings)
	for _, it := range add {
		for _, o := range it.Offerings {
			out = append(out, saga.Offering{InstanceType: it.Type.Name, Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price,
				ReservationID: o.ReservationID})
		}
	}
	return out, nil
}
