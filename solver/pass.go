package solver

import (
	"github.com/joinery/joinery/solver/resources"
)

// pass is one first-fit-decreasing packing of all pods under one Strategy.
type pass struct {
	p         *prepared
	strategy  Strategy   // the plan-wide strategy
	byClass   []Strategy // per pod class (prepared.podClasses)
	explain   bool
	nodeAvail []resources.List
	claims    []*claim // creation order
	order     []*claim // least-loaded first
	// usage is, per pool, NodePool.Usage plus every open claim's maxCap
	// (pessimistic, as Karpenter counts).
	usage     []resources.List
	nodeCount []int
	// cost is, per pool, NodePool.CostUsage plus every open claim's
	// maxUSD (USD/hour, counted like usage).
	cost    []float64
	placed  []Placement
	unsched []Unschedulable
	price   float64 // USD/hour of all new claims
	bufT    []int32
	bufM    []uint64
	// Claims and nodes only get fuller and narrower, so a pod with the same
	// signature as the previous one and requests at least as large is
	// rejected by every claim and node the previous pod was rejected by: its
	// scans start where the previous pod's ended (last* describe that pod).
	// This holds exactly for resources, labels and taints; a claim rejected
	// by the upsize rule or a limit might in rare cases accept later, and
	// the skip then misses that chance (never a wrong placement).
	lastSig   *podSignature
	lastReq   resources.List
	lastClaim int          // order index from which claims were not yet known to reject
	lastNode  int          // node index likewise
	nodePorts [][]HostPort // host ports bound per existing node
	topo      topoState    // topology counts (when prepared.hasTopo)
	view      domView      // the candidate topoAt looks at (reused)
	tp        topoPod      // the topology verdict of the pod being placed
	topoRej   bool         // the last add was refused by topology
	// Per pool and shape class: whether the class fits the requests being
	// tested (fit), valid while stamp equals gen.
	gen   uint32
	stamp [][]uint32
	fit   [][]bool
	// seeds were opened before the greedy (plantSeeds); seeding is set
	// while they are.
	seeds   []seed
	seeding bool
}

// run packs every pod: existing nodes first (by name), then claims opened in
// this pass (least-loaded first), then a new claim from the first pool in
// weight order that can take the pod; each pod at its strictest relaxation
// level first (preferences honoured), relaxing one preference at a time.
// Pods that fail are retried, as in Karpenter's queue, while a round
// places at least one of them (a pod with affinity to pods later in the
// order succeeds once they are placed). With explain set, unschedulable
// pods get their reasons (computed against the final pass state).
func (p *prepared) run(st Strategy, explain bool) *pass {
	byClass := make([]Strategy, p.classes)
	for i := range byClass {
		byClass[i] = st
	}
	return p.runClasses(byClass, explain, -1)
}

// runClasses is run with one strategy per pod class; only >= 0 packs the
// pods of that class alone.
func (p *prepared) runClasses(byClass []Strategy, explain bool, only int) *pass {
	return p.runSeeded(byClass, explain, only, nil)
}

// runSeeded is runClasses after opening the seeds' claims (plantSeeds;
// ignored when only >= 0). With prepared.abortable set it returns nil once
// the deadline has passed.
func (p *prepared) runSeeded(byClass []Strategy, explain bool, only int, seeds []seed) *pass {
	s := &pass{p: p, byClass: byClass, explain: explain}
	if len(byClass) > 0 {
		s.strategy = byClass[0]
	}
	s.nodeAvail = make([]resources.List, len(p.nodes))
	s.nodePorts = make([][]HostPort, len(p.nodes))
	for i, n := range p.nodes {
		s.nodeAvail[i], s.nodePorts[i] = n.Available, normPorts(n.HostPorts)
	}
	for _, pl := range p.pools {
		s.usage = append(s.usage, pl.np.Usage)
		s.cost = append(s.cost, pl.np.CostUsage)
		s.nodeCount = append(s.nodeCount, pl.np.NodeCount)
		s.stamp = append(s.stamp, make([]uint32, len(pl.classUsable)))
		s.fit = append(s.fit, make([]bool, len(pl.classUsable)))
	}
	if p.hasTopo {
		s.topo = p.baseTopo.clone()
	}
	var done []bool
	if only < 0 && len(seeds) > 0 {
		s.seeds, done = seeds, make([]bool, len(p.pods))
		if !s.plantSeeds(seeds, done) {
			return nil // past the deadline
		}
	}
	var failed []*podInfo
	for i, pi := range p.pods {
		if p.abortable && i%64 == 0 && p.expired() {
			return nil // past the deadline: the pass is dropped
		}
		if (only >= 0 && pi.class != only) || (done != nil && done[pi.idx]) {
			continue
		}
		if pi.pod.refused() {
			failed = append(failed, pi)
			continue
		}
		if !s.place(pi) {
			failed = append(failed, pi)
		}
	}
	for progress := p.hasTopo; progress && len(failed) > 0; {
		progress = false
		left := failed[:0]
		for _, pi := range failed {
			if !pi.pod.refused() && s.place(pi) {
				progress = true
				continue
			}
			left = append(left, pi)
		}
		failed = left
	}
	for _, pi := range failed {
		s.fail(pi)
	}
	for _, c := range s.claims {
		s.price += c.price()
	}
	return s
}

// place tries the pod at each relaxation level in turn.
func (s *pass) place(pi *podInfo) bool {
	for _, sig := range pi.levels {
		if !sig.monotone || sig != s.lastSig || !s.lastReq.Fits(pi.req) {
			s.lastClaim, s.lastNode = 0, 0
		}
		s.lastSig, s.lastReq = sig, pi.req
		s.tp.active = false
		if s.p.hasTopo {
			s.prepTopo(pi, sig)
		}
		if s.placeExisting(pi, sig) || s.placeClaim(pi, sig) || s.placeNew(pi, sig) {
			return true
		}
		s.lastClaim = len(s.order)
	}
	return false
}

func (s *pass) fail(pi *podInfo) {
	u := Unschedulable{Pod: pi.key}
	if s.explain {
		u.Reason = s.reason(pi)
	}
	s.unsched = append(s.unsched, u)
}

func (s *pass) placeExisting(pi *podInfo, sig *podSignature) bool {
	for i := s.lastNode; i < len(s.p.nodes); i++ {
		n := s.p.nodes[i]
		if !pi.req.Fits(s.nodeAvail[i]) || !sig.fitsNode(i, n) {
			continue
		}
		if len(pi.ports) > 0 {
			if _, bad := portsConflict(pi.ports, s.nodePorts[i]); bad {
				continue
			}
		}
		if s.tp.active {
			s.view = domView{fixed: &s.p.nodeVals[i]}
			if _, ok := s.topoAt(pi, sig, int32(i), &s.view); !ok {
				continue
			}
			s.topo.record(pi.topo, sig, int32(i), &s.p.nodeVals[i])
		}
		s.nodePorts[i] = append(s.nodePorts[i], pi.ports...)
		s.nodeAvail[i] = s.nodeAvail[i].Sub(pi.req)
		s.placed = append(s.placed, Placement{Pod: pi.key, Node: n.Name})
		s.lastNode = i
		return true
	}
	s.lastNode = len(s.p.nodes)
	return false
}

func (s *pass) placeClaim(pi *podInfo, sig *podSignature) bool {
	for i := s.lastClaim; i < len(s.order); i++ {
		// Claims before i keep their order when s.order[i] moves right.
		if s.tryAdd(s.order[i], pi, sig) {
			s.lastClaim = i
			return true
		}
	}
	return false
}

func (s *pass) placeNew(pi *podInfo, sig *podSignature) bool {
	for _, pl := range s.p.pools {
		if s.open(pl, pi, sig) {
			return true
		}
	}
	return false
}

// limitOK reports whether a node of the given capacity fits the pool's
// limits on top of usage (usage equal to a limit is allowed).
func (s *pass) limitOK(pl *poolInfo, u, capacity resources.List) bool {
	for r := 0; r < resources.Count; r++ {
		if pl.np.HasLimit[r] && u[r]+capacity[r] > pl.np.Limits[r] {
			return false
		}
	}
	return true
}

func (s *pass) nodesOK(pl *poolInfo) bool {
	return pl.np.NodesLimit < 0 || s.nodeCount[pl.idx]+1 <= pl.np.NodesLimit
}

// open starts a new claim in pool pl for the pod. The claim's type set is
// every type (and offering) meeting the pool's and the pod's constraints
// that fits the pod with its daemonset overhead and the pool's remaining
// limits; then exotic types (GPU, accelerator, metal) are dropped when any
// other type remains, and types above the pass's vCPU cap are dropped
// (the cap never excludes the cheapest type that fits the pod).
func (s *pass) open(pl *poolInfo, pi *podInfo, sig *podSignature) bool {
	sp := sig.forPool(pl)
	if sp.taint != nil || !s.nodesOK(pl) || !pi.req.Fits(pl.maxUsable) {
		return false
	}
	for _, term := range sp.terms {
		if !term.any {
			continue
		}
		set := s.p.openSet(pl, term, pi.req, s.byClass[pi.class].VCPUCap)
		if len(set.fit) == 0 {
			continue
		}
		var cand *candidates
		u, cu := s.usage[pl.idx], s.cost[pl.idx]
		if s.limitOK(pl, u, set.maxCapFit) && costOK(pl, cu, set.maxUSDFit) {
			cand = set // no limit can exclude any type
		} else {
			cand = newCandidates(pl, set.fit, set.fitM, s.byClass[pi.class].VCPUCap, func(t int32, m uint64) bool {
				return s.limitOK(pl, u, pl.types[t].opt.Shape.Capacity) && costOK(pl, cu, pl.types[t].dearest(m))
			})
		}
		if len(cand.ts) == 0 {
			continue
		}
		ts, ms := cand.ts, cand.ms
		maxUsable, maxCap := cand.maxUsable, cand.maxCap
		pins := noVals()
		if (len(pi.ports) > 0 && pl.dsPorts != nil) || s.tp.active {
			var ok bool
			if ts, ms, pins, ok = s.narrowNew(pl, pi, sig, ts, ms); !ok || !s.p.pinsFreeOK(pl, nil, &pins, nil, term.free) {
				continue
			}
			maxUsable, maxCap = bounds(pl, ts)
		}
		c := &claim{pool: pl, seq: len(s.claims), req: pi.req, pods: []*podInfo{pi},
			types: append([]int32(nil), ts...), masks: append([]uint64(nil), ms...),
			maxUsable: maxUsable, maxCap: maxCap, maxUSD: launchUSD(pl, ts, ms), pins: pins}
		c.ports = append(c.ports, pi.ports...)
		if s.tp.active {
			s.topo.record(pi.topo, sig, s.p.hostBase+int32(c.seq), &c.pins)
		}
		c.addReqs(term)
		s.usage[pl.idx] = s.usage[pl.idx].Add(c.maxCap)
		s.cost[pl.idx] += c.maxUSD
		s.nodeCount[pl.idx]++
		s.claims = append(s.claims, c)
		// A new claim has one pod and the largest seq.
		at := s.search(c.order())
		s.order = append(s.order, nil)
		copy(s.order[at+1:], s.order[at:])
		s.order[at] = c
		s.lastClaim = at
		return true
	}
	return false
}

// candidates is the type set a new claim starts from.
type candidates struct {
	// fit/fitM: the term's types (cheapest first) that fit the pod, before
	// limits, exotic and cap filtering; maxCapFit their largest capacity,
	// maxUSDFit their dearest offering (only when the pool has a USD limit).
	fit       []int32
	fitM      []uint64
	maxCapFit resources.List
	maxUSDFit float64
	// ts/ms: the claim's starting set; empty when minValues cannot be met.
	ts        []int32
	ms        []uint64
	maxUsable resources.List
	maxCap    resources.List
}

type openKey struct {
	term *compiledTerm
	req  resources.List
	cap  int
}

// openSet returns, cached across passes, the starting set of a new claim
// for a pod with these requests under this term and cap, ignoring limits.
func (p *prepared) openSet(pl *poolInfo, term *compiledTerm, req resources.List, vcpuCap int) *candidates {
	k := openKey{term, req, vcpuCap}
	if c, ok := p.opens[k]; ok {
		return c
	}
	var fit []int32
	var fitM []uint64
	for _, t := range term.byPrice {
		if req.Fits(pl.usable[t]) {
			fit, fitM = append(fit, t), append(fitM, term.masks[t])
		}
	}
	c := newCandidates(pl, fit, fitM, vcpuCap, nil)
	p.opens[k] = c
	return c
}

// newCandidates filters fit (cheapest first) by ok (nil: all; given each
// type and its offering mask), then drops exotic types unless only exotic
// ones remain, then types above the vCPU cap unless that breaks the
// pool's minValues.
func newCandidates(pl *poolInfo, fit []int32, fitM []uint64, vcpuCap int, ok func(int32, uint64) bool) *candidates {
	c := &candidates{fit: fit, fitM: fitM}
	for i, t := range fit {
		c.maxCapFit = c.maxCapFit.Max(pl.types[t].opt.Shape.Capacity)
		if pl.np.HasCostLimit {
			c.maxUSDFit = max(c.maxUSDFit, pl.types[t].dearest(fitM[i]))
		}
	}
	ts, ms := fit, fitM
	if ok != nil {
		ts, ms = pickMasked(fit, fitM, ok)
	}
	if len(ts) == 0 {
		return c
	}
	nonExotic := 0
	for _, t := range ts {
		if !pl.types[t].exotic {
			nonExotic++
		}
	}
	exoticOK := nonExotic == 0
	allowed := func(t int32) bool { return exoticOK || !pl.types[t].exotic }
	vcpuLimit := -1 // none
	if vcpuCap > 0 {
		for _, t := range ts {
			if allowed(t) { // the cheapest allowed type
				vcpuLimit = max(vcpuCap, pl.types[t].vcpu)
				break
			}
		}
	}
	ct, cm := pick(ts, ms, func(t int32) bool {
		return allowed(t) && (vcpuLimit < 0 || pl.types[t].vcpu <= vcpuLimit)
	})
	if !minValuesOK(pl, ct, cm) {
		if ct, cm = pick(ts, ms, allowed); !minValuesHold(pl, ct, cm) {
			return c
		}
	}
	c.ts, c.ms = ct, cm
	c.maxUsable, c.maxCap = bounds(pl, ct)
	return c
}

// pick returns fresh, exactly sized slices of the entries whose type passes f.
func pick(ts []int32, ms []uint64, f func(int32) bool) ([]int32, []uint64) {
	return pickMasked(ts, ms, func(t int32, _ uint64) bool { return f(t) })
}

// pickMasked is pick with f given each entry's offering mask too.
func pickMasked(ts []int32, ms []uint64, f func(int32, uint64) bool) ([]int32, []uint64) {
	n := 0
	for i, t := range ts {
		if f(t, ms[i]) {
			n++
		}
	}
	ot, om := make([]int32, 0, n), make([]uint64, 0, n)
	for i, t := range ts {
		if f(t, ms[i]) {
			ot, om = append(ot, t), append(om, ms[i])
		}
	}
	return ot, om
}

// better reports whether pass a beats pass b: fewer unschedulable pods,
// then a lower price (USD/hour), then fewer new nodes.
func (a *pass) better(b *pass) bool {
	if len(a.unsched) != len(b.unsched) {
		return len(a.unsched) < len(b.unsched)
	}
	const eps = 1e-9
	if a.price < b.price-eps || a.price > b.price+eps {
		return a.price < b.price
	}
	return len(a.claims) < len(b.claims)
}

// narrowNew filters a new claim's starting set (cheapest first) for the
// pod's host ports (types whose daemonsets hold one are dropped) and
// topology (the set narrows to the offerings carrying the chosen values).
// It returns fresh slices, the pinned values and whether anything is left.
func (s *pass) narrowNew(pl *poolInfo, pi *podInfo, sig *podSignature, ts []int32, ms []uint64) ([]int32, []uint64, keyVals, bool) {
	pins := noVals()
	if len(pi.ports) > 0 && pl.dsPorts != nil {
		ts, ms = pick(ts, ms, func(t int32) bool { return !portsBad(pi.ports, pl.dsPorts[t]) })
		if len(ts) == 0 || !minValuesHold(pl, ts, ms) {
			return nil, nil, pins, false
		}
	}
	if !s.tp.active {
		return ts, ms, pins, true
	}
	s.view = domView{pl: pl, ts: ts, ms: ms}
	pins, ok := s.topoAt(pi, sig, s.p.hostBase+int32(len(s.claims)), &s.view)
	if !ok {
		return nil, nil, pins, false
	}
	if s.tp.narrow == 0 {
		return ts, ms, pins, true
	}
	nt, nm, ok := narrowByPins(pl, ts, ms, &pins, s.tp.narrow)
	return nt, nm, pins, ok
}
