package solver

import (
	"math"
	"slices"
)

// seedGap is how close (relative) the configuration LP's master must come
// to its bound before its solution seeds a pass.
var seedGap = 1e-2

// seedShareSteps are the warm starts of the configuration LP that seeds
// the LP-guided passes, in the order Solve tries them: how many ascent
// steps of the weighted-share bound give the LP its starting duals. The LP
// ends at a different near-optimal solution from each, and which seeds
// pack cheapest varies from batch to batch by a few percent either way
// (neither start wins on every batch), so Solve seeds from the cheap start
// first and, while its budget lasts, from the full one.
var seedShareSteps = []int{20, shareSteps}

// seed is a NodeClaim the LP-guided pass opens before packing the other
// pods: the pods of one configuration of the configuration LP's solution
// (configLP) for one node of its pool.
type seed struct {
	pool *poolInfo
	pods []*podInfo // pods[0] opens the claim; the rest in packing order
}

// lpSolution is one warm start's configuration LP: its lower bound on any
// plan (USD/hour; 0 if none) and its final master's configurations.
type lpSolution struct {
	bound    float64
	sol      []lpConfiguration
	panicked any // the LP's goroutine panicked: lpSeeds panics with it
}

// startLPs solves the configuration LP from each warm start of
// seedShareSteps, in order, on a goroutine of its own: the LP reads only
// the share setup, built here before it starts (it fills the signatures'
// per-pool caches the LP reads), and the passes that run meanwhile do
// not need it. It returns one channel per warm start, nil when the LP is
// skipped (fewer than two groups).
func (p *prepared) startLPs() []chan lpSolution {
	p.share = newShareSetup(p, boundGroups(p))
	if len(p.share.groups) < 2 {
		return nil
	}
	out := make([]chan lpSolution, len(seedShareSteps))
	for i := range out {
		out[i] = make(chan lpSolution, 1)
	}
	go func() {
		i := 0
		defer func() {
			// A panic belongs to Solve's caller (an activity reports
			// it), not to this goroutine, where it would end the process.
			if r := recover(); r != nil {
				for ; i < len(out); i++ {
					out[i] <- lpSolution{panicked: r}
				}
			}
		}()
		for ; i < len(seedShareSteps); i++ {
			beforeLP()
			_, y := p.share.ascend(p, seedShareSteps[i])
			if p.expired() {
				out[i] <- lpSolution{}
				continue
			}
			bound, sol := configLP(p, p.share.groups, y, true, seedGap)
			out[i] <- lpSolution{bound: bound, sol: sol}
		}
	}()
	return out
}

// beforeLP runs before each warm start's LP (tests make it panic).
var beforeLP = func() {}

// lpSeeds turns the configuration LP's solution into seeds: ⌊x_c⌋ claims
// per configuration c, each with c's pods per group (taken from the groups
// in packing order). A seed's opener is a pod whose first NodePool (in
// weight order) able to take it is the configuration's pool, accelerator
// pods first (so accelerator types survive the exotic filter), else the
// largest; a configuration with no such pod is skipped and its pods are
// left to the greedy. It returns no seeds when the LP is empty, and the
// LP's bound.
// Past the prepared deadline the LP stops where it is (its master is
// feasible at every round), so the seeds then depend on the clock.
func (p *prepared) lpSeeds(lp lpSolution) ([]seed, float64) {
	if lp.panicked != nil {
		panic(lp.panicked)
	}
	groups, bound, sol := p.share.groups, lp.bound, lp.sol
	next := make([]int, len(groups)) // pods of each group handed out
	var seeds []seed
	for _, c := range sol {
		for copies := int(math.Floor(c.x + 1e-6)); copies > 0; copies-- {
			var pods []*podInfo
			taken := slices.Clone(next)
			for g, k := range c.counts {
				for ; k > 0 && taken[g] < len(groups[g].pods); k-- {
					pods = append(pods, groups[g].pods[taken[g]])
					taken[g]++
				}
			}
			opener := -1
			for i, pi := range pods {
				if p.firstPool(pi) != c.pool {
					continue
				}
				if opener < 0 || (pi.req.HasExtended() && !pods[opener].req.HasExtended()) ||
					(pi.req.HasExtended() == pods[opener].req.HasExtended() && pi.idx < pods[opener].idx) {
					opener = i
				}
			}
			if opener < 0 {
				break // the pods stay with their groups, for other seeds or the greedy
			}
			next = taken
			pods[0], pods[opener] = pods[opener], pods[0]
			slices.SortFunc(pods[1:], func(a, b *podInfo) int { return a.idx - b.idx })
			seeds = append(seeds, seed{pool: c.pool, pods: pods})
		}
	}
	return seeds, bound
}

// firstPool is the first pool (weight order) whose taints the pod's most
// relaxed level tolerates, whose requirements it can meet and whose largest
// type fits it: the only pool a new claim may open in for it (limits
// ignored, which only makes seeding more conservative). nil if none.
func (p *prepared) firstPool(pi *podInfo) *poolInfo {
	for _, pl := range p.pools {
		for _, sig := range pi.levels {
			sp := sig.forPool(pl)
			if sp.taint != nil || !pi.req.Fits(pl.maxUsable) {
				continue
			}
			for _, term := range sp.terms {
				if term.any {
					return pl
				}
			}
		}
	}
	return nil
}

// plantSeeds opens the seeds' claims (each opener through the ordinary
// open, in the seed's pool only) and adds their other pods round robin,
// one per seed per round, so that zone spread constraints see the claims
// fill evenly. Every add goes through the ordinary checks (resources,
// types, topology, ports, limits) except the cost heuristics (upsize rule,
// size cap, accelerator slack rule): the LP chose these nodes. Later pods
// may join a seed's claim only where its cheapest type stays (see
// claim.seeded). Pods a seed
// cannot take are left to the greedy; done marks the placed ones. With
// prepared.abortable set it gives up (false) once the deadline has passed.
func (s *pass) plantSeeds(seeds []seed, done []bool) bool {
	saved := s.byClass
	loose := make([]Strategy, len(saved))
	for i := range loose {
		loose[i] = Strategy{UpsizeTolerance: math.Inf(1)}
	}
	s.byClass, s.seeding = loose, true
	defer func() {
		s.byClass, s.seeding = saved, false
		s.lastSig, s.lastClaim, s.lastNode = nil, 0, 0
	}()
	late := func(i int) bool { return s.p.abortable && i%64 == 0 && s.p.expired() }
	claims := make([]*claim, len(seeds))
	for i, sd := range seeds {
		if late(i) {
			return false
		}
		pi := sd.pods[0]
		if pi.pod.refused() {
			continue
		}
		n := len(s.claims)
		if s.atSomeLevel(pi, func(sig *podSignature) bool { return s.open(sd.pool, pi, sig) }) {
			claims[i], done[pi.idx] = s.claims[n], true
			claims[i].seeded = true
		}
	}
	for k, n := 1, 0; ; k++ {
		more := false
		for i, sd := range seeds {
			if claims[i] == nil || k >= len(sd.pods) {
				continue
			}
			if n++; late(n) {
				return false
			}
			more = true
			pi := sd.pods[k]
			if pi.pod.refused() {
				continue
			}
			if s.atSomeLevel(pi, func(sig *podSignature) bool { return s.add(claims[i], pi, sig) }) {
				done[pi.idx] = true
			}
		}
		if !more {
			return true
		}
	}
}

// atSomeLevel tries try at each of the pod's relaxation levels in turn,
// with the topology state prepared for that level, and reports whether one
// succeeded.
func (s *pass) atSomeLevel(pi *podInfo, try func(*podSignature) bool) bool {
	for _, sig := range pi.levels {
		s.tp.active = false
		if s.p.hasTopo {
			s.prepTopo(pi, sig)
		}
		if try(sig) {
			return true
		}
	}
	return false
}

// sameSeeds reports whether a and b open the same claims with the same pods.
func sameSeeds(a, b []seed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].pool != b[i].pool || !slices.Equal(a[i].pods, b[i].pods) {
			return false
		}
	}
	return true
}
