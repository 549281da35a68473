package capacity

import (
	"sync"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
)

// Prices prices nodes in USD/hour: their instance type and capacity type
// in their zone (on-demand, or the zone's spot price from the market),
// after their NodePool's NodeOverlays as the last snapshot resolved them.
// It is safe for concurrent use.
type Prices struct {
	instanceType func(string) (*catalog.InstanceType, bool)
	market       func() *catalog.Market
	nodePool     func(string) *apiv1.NodePool

	mu  sync.Mutex
	set *overlay.Set
	// pools are the snapshot's pools by name (name, labels and
	// requirements: what an overlay selects by), so pricing a node does not
	// decode every NodePool again.
	pools map[string]solver.NodePool
}

// NewPrices prices over a catalog lookup (the live catalog, then the
// embedded one), the market (nil: the catalog's static prices) and the
// NodePools.
func NewPrices(instanceType func(string) (*catalog.InstanceType, bool), market func() *catalog.Market, nodePool func(string) *apiv1.NodePool) *Prices {
	return &Prices{instanceType: instanceType, market: market, nodePool: nodePool}
}

// SetOverlays keeps the NodeOverlay set a snapshot resolved (nil: none)
// and the pools it resolved them against.
func (p *Prices) SetOverlays(set *overlay.Set, pools []solver.NodePool) {
	var byName map[string]solver.NodePool
	if set != nil {
		byName = make(map[string]solver.NodePool, len(pools))
		for _, sp := range pools {
			byName[sp.Name] = solver.NodePool{Name: sp.Name, Labels: sp.Labels, Requirements: sp.Requirements}
		}
	}
	p.mu.Lock()
	p.set, p.pools = set, byName
	p.mu.Unlock()
}

// Overlays is the set the last snapshot resolved (nil: none) and the pool
// it knew by that name (ok false: not in the snapshot).
func (p *Prices) Overlays(pool string) (*overlay.Set, solver.NodePool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp, ok := p.pools[pool]
	return p.set, sp, ok
}

// Overlaid is a price after the NodeOverlays of the pool.
func (p *Prices) Overlaid(it *catalog.InstanceType, poolName, zone, capacityType string, base float64) float64 {
	set, pool, ok := p.Overlays(poolName)
	if set == nil {
		return base
	}
	if !ok {
		np := p.nodePool(poolName)
		if np == nil {
			return base
		}
		pool = solver.NodePool{Name: np.Name, Labels: np.Spec.Template.ObjectMeta.Labels, Requirements: np.Spec.Template.Spec.Requirements}
	}
	return set.Price(&pool, it, zone, capacityType, base)
}

// Node is a node's price (0: its instance type is unknown), also the
// karpenter_nodepools_cost_total metric's.
func (p *Prices) Node(n *corev1.Node) float64 {
	it, ok := p.instanceType(n.Labels[apiv1.LabelInstanceType])
	if !ok {
		return 0
	}
	zone, ct := n.Labels[apiv1.LabelZone], n.Labels[apiv1.LabelCapacityType]
	return p.Overlaid(it, n.Labels[apiv1.LabelNodePool], zone, ct, p.market().Price(it, zone, ct))
}

// List is a node's price before NodeOverlays (0: its type is unknown).
func (p *Prices) List(n *corev1.Node) float64 {
	it, ok := p.instanceType(n.Labels[apiv1.LabelInstanceType])
	if !ok {
		return 0
	}
	return p.market().Price(it, n.Labels[apiv1.LabelZone], n.Labels[apiv1.LabelCapacityType])
}
