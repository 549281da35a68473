package activities

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// addCostUsage sets the CostUsage of each pool with a USD/hour limit: its
// NodeClaims not being deleted (launched and in flight, as addNodePools
// counts Usage), each at claimUSD. Run after applyOverlays: the prices
// are the ones the plan is made with.
func (b *snapshots) addCostUsage(s *snapshot, claims []*apiv1.NodeClaim) {
	for i := range s.input.NodePools {
		sp := &s.input.NodePools[i]
		if !sp.HasCostLimit {
			continue
		}
		for _, nc := range claims {
			if nc.Labels[apiv1.LabelNodePool] == sp.Name && nc.DeletionTimestamp == nil {
				sp.CostUsage += b.claimUSD(nc)
			}
		}
	}
}

// claimUSD is what a NodeClaim costs (USD/hour, after its pool's
// NodeOverlays): its launched type, zone and capacity type when known,
// else the dearest it may launch as over its requirements (as claimShape
// takes the largest capacity for limits).
func (b *snapshots) claimUSD(nc *apiv1.NodeClaim) float64 {
	types := claimValues(nc, apiv1.LabelInstanceType, nil)
	zones := claimValues(nc, apiv1.LabelZone, nil)
	if len(zones) == 0 {
		if _, cls := b.pools.claimLaunch(nc); cls != nil {
			zones = zonesOf(cls)
		}
		if len(zones) == 0 {
			zones = catalog.DefaultZones
		}
	}
	cts := claimValues(nc, apiv1.LabelCapacityType, []string{apiv1.CapacityTypeOnDemand, apiv1.CapacityTypeSpot})
	pool := nc.Labels[apiv1.LabelNodePool]
	worst := 0.0
	for _, name := range types {
		it, ok := b.types.Get(name)
		if !ok {
			continue
		}
		for _, z := range zones {
			for _, ct := range cts {
				worst = max(worst, b.prices.Overlaid(it, pool, z, ct, b.market.Price(it, z, ct)))
			}
		}
	}
	return worst
}

// claimValues is the NodeClaim's label key when set (a launched claim
// has it), else the values its requirements allow (In), else def.
func claimValues(nc *apiv1.NodeClaim, key string, def []string) []string {
	if v := nc.Labels[key]; v != "" {
		return []string{v}
	}
	for _, r := range nc.Spec.Requirements {
		if r.Key == key && r.Operator == apiv1.OpIn {
			return r.Values
		}
	}
	return def
}
