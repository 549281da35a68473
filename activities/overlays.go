package activities

import (
	"sort"
	"sync"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
)

// overlayState is the NodeOverlay set the last snapshot resolved: existing
// nodes are priced with it, and the leader reports its verdicts.
type overlayState struct {
	mu  sync.Mutex
	set *overlay.Set
	// pools are the snapshot's pools by name (name, labels and
	// requirements: what an overlay selects by), so pricing a node does not
	// decode every NodePool again.
	pools map[string]solver.NodePool
}

// applyOverlays prices the snapshot's pools after the NodeOverlays the
// cluster watches (none unless --feature-gates NodeOverlay=true).
func (a *world) applyOverlays(s *snapshot) {
	list, _ := a.Cluster.NodeOverlays()
	var set *overlay.Set
	var pools map[string]solver.NodePool
	if len(list) > 0 {
		all := snapshotPools(s)
		set = overlay.Resolve(list, all)
		set.Apply(all)
		pools = make(map[string]solver.NodePool, len(all))
		for _, p := range all {
			pools[p.Name] = solver.NodePool{Name: p.Name, Labels: p.Labels, Requirements: p.Requirements}
			if _, ok := s.static[p.Name]; ok {
				s.static[p.Name] = p
			}
		}
		s.input.NodePools = all[:len(s.input.NodePools)]
	}
	a.overlays.mu.Lock()
	a.overlays.set, a.overlays.pools = set, pools
	a.overlays.mu.Unlock()
}

// lastOverlays is the set the last snapshot resolved (nil: none) and the
// pool it knew by that name (ok false: not in the snapshot).
func (a *world) lastOverlays(pool string) (*overlay.Set, solver.NodePool, bool) {
	a.overlays.mu.Lock()
	defer a.overlays.mu.Unlock()
	p, ok := a.overlays.pools[pool]
	return a.overlays.set, p, ok
}

// ResolveOverlays resolves the watched NodeOverlays against the NodePools
// as they are now, for the leader to report each overlay's verdict.
func (a *world) ResolveOverlays() ([]*v1alpha1.NodeOverlay, *overlay.Set) {
	list, _ := a.Cluster.NodeOverlays()
	if len(list) == 0 {
		return nil, overlay.Resolve(nil, nil)
	}
	pools, _ := a.Cluster.NodePools()
	s := &snapshot{pools: map[string]*apiv1.NodePool{}, static: map[string]solver.NodePool{}}
	a.addNodePools(s, pools, nil, a.Cluster.NodeClass)
	return list, overlay.Resolve(list, snapshotPools(s))
}

// snapshotPools is the snapshot's dynamic pools, then its static ones by
// name: every pool an overlay may price.
func snapshotPools(s *snapshot) []solver.NodePool {
	all := append([]solver.NodePool(nil), s.input.NodePools...)
	names := make([]string, 0, len(s.static))
	for name := range s.static {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		all = append(all, s.static[name])
	}
	return all
}

// overlaidPrice is a node's price after the NodeOverlays of its pool.
func (a *world) overlaidPrice(it *catalog.InstanceType, poolName, zone, capacityType string, base float64) float64 {
	set, pool, ok := a.lastOverlays(poolName)
	if set == nil {
		return base
	}
	if !ok {
		np := a.nodePool(poolName)
		if np == nil {
			return base
		}
		pool = solver.NodePool{Name: np.Name, Labels: np.Spec.Template.ObjectMeta.Labels, Requirements: np.Spec.Template.Spec.Requirements}
	}
	return set.Price(&pool, it, zone, capacityType, base)
}

// pricesOverlaid reports whether a NodeOverlay sets the price of one of
// the launch's offerings. It resolves the overlays against the NodeClaim's
// pool alone (conflicts are per pool), so any worker answers alike.
func (a *world) pricesOverlaid(poolName string, cls *apiv1.EC2NodeClass, offs []workflows.Offering) bool {
	list, _ := a.Cluster.NodeOverlays()
	np := a.nodePool(poolName)
	if len(list) == 0 || np == nil {
		return false
	}
	pools := []solver.NodePool{solver.NodePoolFromMarket(np, cls, a.liveCatalog(), a.Market, zonesOf(cls), nil)}
	set := overlay.Resolve(list, pools)
	for _, o := range offs {
		if it, ok := a.instanceType(o.InstanceType); ok && set.Overlaid(&pools[0], it, o.Zone, o.CapacityType) {
			return true
		}
	}
	return false
}
