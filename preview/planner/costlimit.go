package planner

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/overlay"
)

// costUsage sets the CostUsage of each pool with a USD/hour limit: the
// manifests' Nodes of the pool at the prices the plan uses (the market's,
// after the NodeOverlays in set; nil: none), as the controller counts its
// NodeClaims.
func (b *builder) costUsage(set *overlay.Set) {
	for i := range b.out.Input.NodePools {
		sp := &b.out.Input.NodePools[i]
		if !sp.HasCostLimit {
			continue
		}
		for _, n := range b.nodes {
			it, ok := b.cat.Get(n.Labels[apiv1.LabelInstanceType])
			if !ok || n.Labels[apiv1.LabelNodePool] != sp.Name {
				continue
			}
			zone, ct := n.Labels[apiv1.LabelZone], n.Labels[apiv1.LabelCapacityType]
			price := b.market.Price(it, zone, ct)
			if set != nil {
				price = set.Price(sp, it, zone, ct, price)
			}
			sp.CostUsage += price
		}
	}
}
