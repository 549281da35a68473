package activities

import (
	"sort"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/solver"
)

// applyOverlays prices the snapshot's pools after the NodeOverlays the
// cluster watches (none unless --feature-gates NodeOverlay=true).
func (b *snapshots) applyOverlays(s *snapshot) {
	list, _ := b.cluster.NodeOverlays()
	if len(list) == 0 {
		b.prices.SetOverlays(nil, nil)
		return
	}
	all := snapshotPools(s)
	set := overlay.Resolve(list, all)
	set.Apply(all)
	for _, p := range all {
		if _, ok := s.static[p.Name]; ok {
			s.static[p.Name] = p
		}
	}
	s.input.NodePools = all[:len(s.input.NodePools)]
	b.prices.SetOverlays(set, all)
}

// resolveOverlays resolves the watched NodeOverlays against the NodePools
// as they are now (Activities.ResolveOverlays).
func (b *snapshots) resolveOverlays() ([]*v1alpha1.NodeOverlay, *overlay.Set) {
	list, _ := b.cluster.NodeOverlays()
	if len(list) == 0 {
		return nil, overlay.Resolve(nil, nil)
	}
	pools, _ := b.cluster.NodePools()
	s := &snapshot{pools: map[string]*apiv1.NodePool{}, static: map[string]solver.NodePool{}}
	b.addNodePools(s, pools, nil, b.cluster.NodeClass)
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

// pricesOverlaid reports whether a NodeOverlay sets the price of one of
// the launch's offerings. It resolves the overlays against the NodeClaim's
// pool alone (conflicts are per pool), so any worker answers alike.
func (a *Launch) pricesOverlaid(poolName string, cls *apiv1.EC2NodeClass, offs []saga.Offering) bool {
	list, _ := a.cluster.NodeOverlays()
	np := a.pools.nodePool(poolName)
	if len(list) == 0 || np == nil {
		return false
	}
	pools := []solver.NodePool{solver.NodePoolFromMarket(np, cls, a.types.Live(), a.market, zonesOf(cls), nil)}
	set := overlay.Resolve(list, pools)
	for _, o := range offs {
		if it, ok := a.types.Get(o.InstanceType); ok && set.Overlaid(&pools[0], it, o.Zone, o.CapacityType) {
			return true
		}
	}
	return false
}
