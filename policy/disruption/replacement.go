package disruption

import (
	"fmt"
	"math"
	"sort"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

// MinSpotToSpotTypes: single-node spot-to-spot consolidation needs at least
// this many cheaper spot types, and launches only the cheapest this many (or
// as many as minValues needs), so the price-capacity-optimized launch cannot
// land on a type the next pass would replace again (Karpenter's
// MinInstanceTypesForSpotToSpotConsolidation). Multi-node has no such rule.
const MinSpotToSpotTypes = 15

// replacementFor applies Karpenter's rules for the one new node of a
// consolidation (computeConsolidation, computeSpotToSpotConsolidation,
// filterOutSameInstanceType) to a removal simulation's NewNodeClaim, and
// returns what the saga launches, or nil and why no replacement may be
// launched:
//   - all candidates spot and the replacement may be spot: only with
//     spotToSpot (the SpotToSpotConsolidation gate), then spot only;
//   - otherwise, a replacement that may be spot or on-demand is pinned to
//     spot, so a spot shortage cannot fall back to a dearer on-demand node;
//   - only types whose worst-case launch price (the dearest offering of the
//     capacity type it would launch as) is below the candidates' summed
//     price are kept, and the requirements' minValues must still be met;
//   - multi-node: if a candidate's own instance type is among the options,
//     only types cheaper than that candidate are kept (deleting fewer nodes
//     would do);
//   - single-node spot-to-spot: at least MinSpotToSpotTypes types must
//     remain, and only the cheapest MinSpotToSpotTypes (or what minValues
//     needs, if more) are launched.
func replacementFor(cands []Candidate, nn *solver.NewNodeClaim, spotToSpot bool) (*saga.Replacement, string) {
	total, allSpot := 0.0, true
	for _, c := range cands {
		total += c.Price
		allSpot = allSpot && c.Node.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot
	}
	reqs, types := nn.Requirements, nn.InstanceTypes
	if hasReserved(types) {
		// As Karpenter's scheduler pins a NodeClaim that took a reservation
		// to reserved: the replacement launches into the reservation or
		// not at all (a full reservation must not fall back to a dearer node).
		reqs, types = pinCapacityType(reqs, apiv1.CapacityTypeReserved), onlyCapacityType(types, apiv1.CapacityTypeReserved)
	}
	spotToSpotMove := allSpot && allows(reqs, apiv1.LabelCapacityType, apiv1.CapacityTypeSpot)
	if spotToSpotMove && !spotToSpot {
		return nil, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
	}
	if spotToSpotMove || allows(reqs, apiv1.LabelCapacityType, apiv1.CapacityTypeOnDemand) && allows(reqs, apiv1.LabelCapacityType, apiv1.CapacityTypeSpot) {
		reqs, types = pinSpot(reqs), spotOnly(types)
	}
	types, needed, why := cheaperThan(reqs, types, total)
	if why != "" {
		return nil, why
	}
	if len(cands) > 1 {
		if types, why = notOwnType(cands, reqs, types); why != "" {
			return nil, why
		}
	} else if spotToSpotMove {
		if len(types) < MinSpotToSpotTypes {
			return nil, fmt.Sprintf("SpotToSpotConsolidation requires %d cheaper instance type options than the current candidate to consolidate, got %d",
				MinSpotToSpotTypes, len(types))
		}
		types = types[:min(len(types), max(MinSpotToSpotTypes, needed))]
	}
	return launchPlan(nn, reqs, types), ""
}

// cheaperThan keeps the types whose worst-case launch price is below
// maxPrice and checks minValues over them (needed: how many of the first
// types minValues takes).
func cheaperThan(reqs []apiv1.NodeSelectorRequirementWithMinValues, types []solver.InstanceTypeOption, maxPrice float64) ([]solver.InstanceTypeOption, int, string) {
	var kept []solver.InstanceTypeOption
	for _, it := range types {
		if solver.WorstLaunchPrice(it.Offerings) < maxPrice {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		return nil, 0, fmt.Sprintf("can't replace with a cheaper node (none of %d instance types launches below %.4f USD/hour)", len(types), maxPrice)
	}
	needed, ok := solver.MinValuesNeeded(reqs, kept)
	if !ok {
		return nil, 0, fmt.Sprintf("can't replace with a cheaper node: the %d instance types below %.4f USD/hour do not meet minValues", len(kept), maxPrice)
	}
	return kept, needed, ""
}

// notOwnType is Karpenter's filterOutSameInstanceType: when the options
// include a candidate's own type, a replacement of that type or dearer is
// no better than keeping that candidate, so only cheaper types stay.
func notOwnType(cands []Candidate, reqs []apiv1.NodeSelectorRequirementWithMinValues, types []solver.InstanceTypeOption) ([]solver.InstanceTypeOption, string) {
	own := map[string]float64{}
	for _, c := range cands {
		t := c.Node.Labels[apiv1.LabelInstanceType]
		if p, ok := own[t]; !ok || c.Price < p {
			own[t] = c.Price
		}
	}
	maxPrice := math.Inf(1)
	for _, it := range types {
		if p, ok := own[it.Type.Name]; ok && p < maxPrice {
			maxPrice = p
		}
	}
	if math.IsInf(maxPrice, 1) {
		return types, ""
	}
	kept, _, why := cheaperThan(reqs, types, maxPrice)
	if why != "" {
		return nil, "the replacement would be a candidate's own type or dearer: " + why
	}
	return kept, ""
}

// allows reports whether every requirement on key admits value (no
// requirement: anything goes).
func allows(reqs []apiv1.NodeSelectorRequirementWithMinValues, key, value string) bool {
	for _, r := range reqs {
		if r.Key == key && !r.Matches(value, true) {
			return false
		}
	}
	return true
}

// pinSpot replaces the capacity-type requirements by capacity-type In [spot].
func pinSpot(reqs []apiv1.NodeSelectorRequirementWithMinValues) []apiv1.NodeSelectorRequirementWithMinValues {
	return pinCapacityType(reqs, apiv1.CapacityTypeSpot)
}

// hasReserved reports whether any type has an available reserved offering.
func hasReserved(types []solver.InstanceTypeOption) bool {
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.CapacityType == apiv1.CapacityTypeReserved && o.Available {
				return true
			}
		}
	}
	return false
}

// pinCapacityType replaces the capacity-type requirements by capacity-type In [ct].
func pinCapacityType(reqs []apiv1.NodeSelectorRequirementWithMinValues, ct string) []apiv1.NodeSelectorRequirementWithMinValues {
	out := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(reqs)+1)
	for _, r := range reqs {
		if r.Key != apiv1.LabelCapacityType {
			out = append(out, r)
		}
	}
	return append(out, apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn,
		Values: []string{ct}})
}

// spotOnly keeps the spot offerings of each type and the types that have
// an available one, cheapest first (ties by name).
func spotOnly(types []solver.InstanceTypeOption) []solver.InstanceTypeOption {
	return onlyCapacityType(types, apiv1.CapacityTypeSpot)
}

// onlyCapacityType keeps the offerings of capacity type ct of each type
// and the types that have an available one, cheapest first (ties by name).
func onlyCapacityType(types []solver.InstanceTypeOption, ct string) []solver.InstanceTypeOption {
	var out []solver.InstanceTypeOption
	for _, it := range types {
		var offs []catalog.Offering
		for _, o := range it.Offerings {
			if o.CapacityType == ct && o.Available {
				offs = append(offs, o)
			}
		}
		if len(offs) > 0 {
			it.Offerings = offs
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := solver.CheapestOffering(out[i].Offerings).Price, solver.CheapestOffering(out[j].Offerings).Price
		if pi != pj {
			return pi < pj
		}
		return out[i].Type.Name < out[j].Type.Name
	})
	return out
}

// launchPlan is the Replacement the saga creates: the kept types, their
// offerings cheapest first, the (pinned) requirements and the requests.
func launchPlan(nn *solver.NewNodeClaim, reqs []apiv1.NodeSelectorRequirementWithMinValues, types []solver.InstanceTypeOption) *saga.Replacement {
	r := &saga.Replacement{NodePool: nn.NodePool, Pods: len(nn.Pods), Requests: map[string]string{}}
	for _, it := range types {
		r.InstanceTypes = append(r.InstanceTypes, it.Type.Name)
		r.MaxUSDPerHour = max(r.MaxUSDPerHour, solver.WorstLaunchPrice(it.Offerings))
	}
	r.Offerings = ReplacementOfferings(types, saga.MaxOfferingsPerNodeClaim)
	if len(r.Offerings) > 0 {
		r.USDPerHour = r.Offerings[0].Price
	}
	for _, q := range reqs {
		if q.Key != apiv1.LabelInstanceType {
			r.Requirements = append(r.Requirements, saga.Requirement{Key: q.Key, Operator: q.Operator,
				Values: append([]string(nil), q.Values...), MinValues: q.MinValues})
		}
	}
	for name, q := range nn.Requests.ToResourceList() {
		r.Requests[string(name)] = q.String()
	}
	return r
}

// ReplacementOfferings lists the available offerings of types cheapest
// first (ties by instance type, then zone), at most limit.
func ReplacementOfferings(types []solver.InstanceTypeOption, limit int) []saga.Offering {
	var offs []saga.Offering
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.Available {
				offs = append(offs, saga.Offering{InstanceType: it.Type.Name, Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price,
					ReservationID: o.ReservationID})
			}
		}
	}
	sort.SliceStable(offs, func(i, j int) bool {
		if offs[i].Price != offs[j].Price {
			return offs[i].Price < offs[j].Price
		}
		if offs[i].InstanceType != offs[j].InstanceType {
			return offs[i].InstanceType < offs[j].InstanceType
		}
		return offs[i].Zone < offs[j].Zone
	})
	if len(offs) > limit {
		offs = offs[:limit]
	}
	return offs
}
