package solver

import (
	"math"
	"math/bits"
	"sort"

	"github.com/joinery/joinery/solver/resources"
)

// MaxInstanceTypes is how many instance types a NodeClaim offers the
// launcher: its cheapest ones, as Karpenter's AWS provider truncates to 60.
// A claim counts against its NodePool's limits by the largest capacity among
// these (not among every type that fits), which keeps the pessimistic limit
// accounting from blocking a pool after a few claims.
const MaxInstanceTypes = 60

// claim is a NodeClaim being built in one packing pass. Like Karpenter's, it
// holds the SET of instance types (each with the offerings still allowed)
// that can carry every pod added so far; adding a pod only narrows the set.
type claim struct {
	// A claim only gets fuller and narrower, so once it rejects a pod it
	// rejects every pod with the same signature and requests at least as
	// large (see pass.lastSig for the caveat): rejSig/rejReq remember the
	// last rejection. First in the struct: placing a pod reads them on
	// every claim it passes.
	rejSig *podSignature
	rejReq resources.List
	rejRes bool // the last rejection was not by topology
	pool   *poolInfo
	seq    int // creation order
	// types are the survivors, cheapest compatible offering first (ties by
	// name); masks holds each one's allowed offerings.
	types []int32
	masks []uint64
	req   resources.List // summed pod requests (no daemonset overhead)
	// maxUsable bounds what any surviving type can still take (quick
	// reject; computed when the claim opens and not tightened after);
	// maxCap is the element-wise largest capacity among the first
	// MaxInstanceTypes survivors, which is what the claim counts against
	// the pool's limits.
	maxUsable resources.List
	maxCap    resources.List
	// maxUSD is the dearest offering among those survivors (launchUSD):
	// what the claim counts against the pool's USD/hour limit.
	maxUSD float64
	pods   []*podInfo
	reqs   []req // requirements the pods brought (node selector, chosen affinity term)
	free   []req // the subset on the pool's free keys
	// pins are the values of the topology keys the claim is pinned to (-1:
	// any of its offerings'; pins[0] is the zone); zset caches the zones of
	// its offerings while zsetOK.
	pins   keyVals
	zset   uint64
	zsetOK bool
	// zp caches zonePrice for the zones in zpDone.
	zp     []float64
	zpDone uint64
	ports  []HostPort // host ports its pods bind
	// seeded: opened for an LP seed, whose type the LP chose for its pods.
	// Once planted it takes no pod that would make its cheapest type
	// dearer: on the hard mixed batches, growing the seeds for the pods
	// they leave put the plans 4-6% above the lower bound, keeping them
	// 1-2%.
	seeded bool
}

// slackOnly says whether pi may join c only where c's cheapest type stays:
// an ordinary pod on an accelerator claim, any pod on a seed's claim
// (outside the planting).
func (c *claim) slackOnly(pi *podInfo) bool {
	return (c.req.HasExtended() && !pi.req.HasExtended()) || c.seeded
}

// zones returns the claim's possible zones as a bit set.
func (c *claim) zones() uint64 {
	if c.pins[0] >= 0 {
		return 1 << uint(c.pins[0])
	}
	if !c.zsetOK {
		c.zset = 0
		for i, t := range c.types {
			c.zset |= c.pool.zonesOf(t, c.masks[i])
		}
		c.zsetOK = true
	}
	return c.zset
}

// zonePrice is the claim's price if pinned to zone z (USD/hour; 0 if none),
// cached per zone until the claim's types change.
func (c *claim) zonePrice(z int) float64 {
	if c.zpDone&(1<<uint(z)) != 0 {
		return c.zp[z]
	}
	if c.zp == nil {
		c.zp = make([]float64, len(c.pool.zoneMask))
	}
	c.zp[z] = c.computeZonePrice(z)
	c.zpDone |= 1 << uint(z)
	return c.zp[z]
}

func (c *claim) computeZonePrice(z int) float64 {
	zm := c.pool.zoneMask[z]
	best := -1.0
	for i, t := range c.types {
		if m := c.masks[i] & zm[t]; m != 0 {
			if p := c.pool.types[t].cheapest(m); best < 0 || p < best {
				best = p
			}
		}
	}
	return max(best, 0)
}

// price is the USD/hour of the cheapest surviving type's cheapest offering.
func (c *claim) price() float64 {
	if len(c.types) == 0 {
		return 0
	}
	return c.pool.types[c.types[0]].cheapest(c.masks[0])
}

// orderKey sorts claims least-loaded first (fewest pods), then oldest.
type orderKey struct{ pods, seq int }

func (c *claim) order() orderKey { return orderKey{len(c.pods), c.seq} }

func (a orderKey) less(b orderKey) bool {
	if a.pods != b.pods {
		return a.pods < b.pods
	}
	return a.seq < b.seq
}

// search returns the index of the first claim in order not less than k.
func (s *pass) search(k orderKey) int {
	return sort.Search(len(s.order), func(i int) bool { return !s.order[i].order().less(k) })
}

// reorder moves a claim whose order key was old to its place for its
// current key (keys only grow: a claim gains pods).
func (s *pass) reorder(c *claim, old orderKey) {
	from := s.search(old)
	k, rest := c.order(), s.order[from+1:]
	// Last index whose key is smaller than c's new one (c itself excluded).
	to := from + sort.Search(len(rest), func(i int) bool { return !rest[i].order().less(k) })
	if to <= from {
		return
	}
	copy(s.order[from:to], s.order[from+1:to+1])
	s.order[to] = c
}

// cheapest is the lowest price among the offerings in mask (USD/hour), or -1.
func (ti *typeInfo) cheapest(mask uint64) float64 {
	best := -1.0
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if i >= len(ti.prices) {
			break
		}
		if p := ti.prices[i]; best < 0 || p < best {
			best = p
		}
	}
	return best
}

// upsizeOK decides whether a pod may force a claim from its cheapest type
// oldT (at oldPrice) to newT (at newPrice, higher), with load the claim's
// requests including the pod. It compares the USD/hour per unit of the
// load's dominant resource (the one filling newT most): growing m5.2xlarge
// into m5.4xlarge keeps the unit price and is fine, growing a 1-GPU node
// into a 4-GPU p3.8xlarge for a second GPU pod, or a spot node into
// on-demand for one pod, is not; the pod then goes elsewhere.
//
// tol is how much worse, as a fraction, the unit price may get
// (Strategy.UpsizeTolerance).
func upsizeOK(pl *poolInfo, oldT, newT int32, oldPrice, newPrice float64, load resources.List, tol float64) bool {
	un, uo := pl.usable[newT], pl.usable[oldT]
	dom, share := -1, -1.0
	for r := range load {
		if load[r] > 0 && un[r] > 0 {
			if f := float64(load[r]) / float64(un[r]); f > share {
				dom, share = r, f
			}
		}
	}
	if dom < 0 || uo[dom] <= 0 {
		return false
	}
	return newPrice/float64(un[dom]) <= (1+tol)*oldPrice/float64(uo[dom])
}

// bounds computes maxUsable over all types in ts and launchCap.
func bounds(pl *poolInfo, ts []int32) (maxUsable, maxCap resources.List) {
	for _, t := range ts {
		maxUsable = maxUsable.Max(pl.usable[t])
	}
	return maxUsable, launchCap(pl, ts)
}

// launchCap is the element-wise largest capacity among the first
// MaxInstanceTypes types of ts: what a claim counts against limits.
func launchCap(pl *poolInfo, ts []int32) (maxCap resources.List) {
	for _, t := range ts[:min(len(ts), MaxInstanceTypes)] {
		maxCap = maxCap.Max(pl.types[t].opt.Shape.Capacity)
	}
	return maxCap
}

// tryAdd adds the pod to the claim if some surviving type (and offering)
// meets the pod's constraints and still fits all requests, the pool's
// limits still hold, and the claim does not get a worse unit price.
//
// The claim remembers its last rejection: a pod with the same signature and
// requests at least as large is rejected again without a look, when the
// signature is monotone or the rejection came after the topology check
// passed (resources, types and ports only ever narrow; a zone the claim was
// pinned to for that check stays pinned).
func (s *pass) tryAdd(c *claim, pi *podInfo, sig *podSignature) bool {
	if c.rejSig == sig && (sig.monotone || c.rejRes) && c.rejReq.Fits(pi.req) {
		return false
	}
	s.topoRej = false
	if !s.add(c, pi, sig) {
		c.rejSig, c.rejReq, c.rejRes = sig, pi.req, !s.topoRej
		return false
	}
	return true
}

// addition is what add knows about one pod joining one claim before it
// tries the pod's terms: the claim's requests with the pod, the pod's
// signature in the pool, the daemonset ports to check (nil: none), and
// the key values and host the topology check placed it in (narrow: the
// keys whose pin narrows a claim that spans several values; pinMask: the
// offerings of each type carrying every such pinned value).
type addition struct {
	newReq  resources.List
	sp      *poolSignature
	dsPorts [][]HostPort
	pins    keyVals
	host    int32
	narrow  uint16
	pinMask []uint64
}

// add adds the pod to the claim through the first of its terms that some
// surviving type meets under the cost rules and the pool's limits (see
// tryAdd).
func (s *pass) add(c *claim, pi *podInfo, sig *podSignature) bool {
	a, ok := s.prepareAdd(c, pi, sig)
	if !ok {
		return false
	}
	pl := c.pool
	for _, term := range a.sp.terms {
		if !term.any || !freeOK(pl, c.free, term.free) || !s.p.pinsFreeOK(pl, &c.pins, &a.pins, c.free, term.free) {
			continue
		}
		rejects := s.costRejects(c, pi, term, &a)
		if rejects && !verifyCostRejects {
			continue
		}
		ts, ms, removed, narrowed := s.narrowTypes(c, pi, term, &a)
		if verifyCostRejects {
			s.checkCostRejects(c, pi, rejects, ts, ms, narrowed, a.newReq)
			if rejects {
				continue
			}
		}
		if len(ts) == 0 {
			continue
		}
		var b launchBound
		if removed || narrowed {
			if b, ok = s.narrowedOK(c, pi, ts, ms, narrowed, a.newReq); !ok {
				continue
			}
		}
		s.commitAdd(c, pi, sig, term, &a, ts, ms, removed || narrowed, b)
		return true
	}
	return false
}

// prepareAdd checks what does not depend on the pod's terms: resources
// against the claim's largest type, the pool's taints, host ports, and
// the topology placement.
func (s *pass) prepareAdd(c *claim, pi *podInfo, sig *podSignature) (addition, bool) {
	pl := c.pool
	a := addition{newReq: c.req.Add(pi.req), pins: noVals(), host: s.p.hostBase + int32(c.seq)}
	if !a.newReq.Fits(c.maxUsable) {
		return a, false
	}
	a.sp = sig.forPool(pl)
	if a.sp.taint != nil {
		return a, false
	}
	if len(pi.ports) > 0 {
		if _, bad := portsConflict(pi.ports, c.ports); bad {
			return a, false
		}
		a.dsPorts = pl.dsPorts
	}
	if s.tp.active {
		var ok bool
		s.view = domView{c: c, pl: pl, ts: c.types, ms: c.masks}
		if a.pins, ok = s.topoAt(pi, sig, a.host, &s.view); !ok {
			s.topoRej = true
			return a, false
		}
		if a.narrow = s.tp.narrow; a.narrow != 0 {
			a.pinMask = pl.pinMasks(&a.pins, a.narrow)
		}
	}
	return a, true
}

// narrowTypes is the claim's type set narrowed by the term, the zone and
// the daemonset ports (types and offering masks, in s's buffers), whether
// a type was removed and whether an offering mask narrowed.
func (s *pass) narrowTypes(c *claim, pi *podInfo, term *compiledTerm, a *addition) (ts []int32, ms []uint64, removed, narrowed bool) {
	ts, ms = s.bufT[:0], s.bufM[:0]
	s.gen++
	for i, t := range c.types {
		m := s.survivingMask(c, pi, term, a, i, t)
		if m == 0 {
			removed = true
			continue
		}
		narrowed = narrowed || m != c.masks[i]
		ts, ms = append(ts, t), append(ms, m)
	}
	s.bufT, s.bufM = ts, ms
	return ts, ms, removed, narrowed
}

// survivingMask is the offerings of the claim's i-th type t left by the
// addition (0: the type goes).
func (s *pass) survivingMask(c *claim, pi *podInfo, term *compiledTerm, a *addition, i int, t int32) uint64 {
	m := c.masks[i]
	if !term.trivial {
		m &= term.masks[t]
	}
	if a.pinMask != nil {
		m &= a.pinMask[t]
	}
	if m == 0 || (a.dsPorts != nil && portsBad(pi.ports, a.dsPorts[t])) || !s.classFits(c.pool, t, a.newReq) {
		return 0
	}
	return m
}

func portsBad(pod, ds []HostPort) bool {
	_, bad := portsConflict(pod, ds)
	return bad
}

// classFits says whether req fits type t's usable resources, computed once
// per usable shape (class) per s.gen.
func (s *pass) classFits(pl *poolInfo, t int32, req resources.List) bool {
	cl := pl.class[t]
	if stamp := s.stamp[pl.idx]; stamp[cl] != s.gen {
		stamp[cl], s.fit[pl.idx][cl] = s.gen, req.Fits(pl.classUsable[cl])
	}
	return s.fit[pl.idx][cl]
}

// launchBound is what a claim's type set counts against its pool's limits:
// its launch capacity and dearest offering.
type launchBound struct {
	cap resources.List
	usd float64
}

// narrowedOK applies the cost rules (accelerator slack, upsize), minValues
// and the pool's limits to a narrowed type set (sorting it by price when
// offerings narrowed); it returns the set's launch bound.
func (s *pass) narrowedOK(c *claim, pi *podInfo, ts []int32, ms []uint64, narrowed bool, newReq resources.List) (launchBound, bool) {
	pl := c.pool
	if s.refusesNarrowed(c, pi, ts, ms, narrowed, newReq) {
		return launchBound{}, false
	}
	if narrowed {
		pl.sortByPrice(ts, ms)
	}
	if !minValuesHold(pl, ts, ms) {
		return launchBound{}, false
	}
	b := launchBound{cap: launchCap(pl, ts), usd: launchUSD(pl, ts, ms)}
	if !s.limitOK(pl, s.usage[pl.idx].Sub(c.maxCap), b.cap) || !costOK(pl, s.cost[pl.idx]-c.maxUSD, b.usd) {
		return launchBound{}, false
	}
	return b, true
}

// commitAdd puts the pod on the claim: the narrowed types (when changed)
// and their launch bound against the pool's usage, the zone, the
// topology record, ports, requests and the claim's place in the order.
func (s *pass) commitAdd(c *claim, pi *podInfo, sig *podSignature, term *compiledTerm, a *addition, ts []int32, ms []uint64, changed bool, b launchBound) {
	pl := c.pool
	old := c.order()
	if changed {
		c.types = append(c.types[:0], ts...)
		c.masks = append(c.masks[:0], ms...)
		// maxUsable stays as it was: still an upper bound, as the set only shrank.
		s.usage[pl.idx] = s.usage[pl.idx].Sub(c.maxCap).Add(b.cap)
		s.cost[pl.idx] += b.usd - c.maxUSD
		c.maxCap, c.maxUSD = b.cap, b.usd
		c.zsetOK, c.zpDone = false, 0
	}
	for k, v := range a.pins {
		if v >= 0 {
			c.pins[k] = v
		}
	}
	if s.tp.active {
		s.topo.record(pi.topo, sig, a.host, &c.pins)
	}
	c.ports = append(c.ports, pi.ports...)
	c.req = a.newReq
	c.pods = append(c.pods, pi)
	c.addReqs(term)
	s.reorder(c, old)
}

// refusesNarrowed applies the cost rules (refusesPrice) to a narrowed
// type set, whose cheapest type is found again when offerings narrowed.
func (s *pass) refusesNarrowed(c *claim, pi *podInfo, ts []int32, ms []uint64, narrowed bool, newReq resources.List) bool {
	pl := c.pool
	newT, newPrice := ts[0], pl.types[ts[0]].cheapest(ms[0])
	if narrowed { // offerings changed: prices too
		for i, t := range ts {
			if p := pl.types[t].cheapest(ms[i]); p < newPrice {
				newT, newPrice = t, p
			}
		}
	}
	return s.refusesPrice(c, pi, newT, newPrice, newReq)
}

// refusesPrice applies the cost rules to the claim's new cheapest type
// newT at newPrice, with the pod's requests added (newReq): an ordinary
// pod only fills the slack of an accelerator claim (growing a GPU node for
// CPU work costs GPU prices), a pod after the planting only the slack of a
// seed's claim, and any pod only grows a claim within its upsize
// tolerance.
func (s *pass) refusesPrice(c *claim, pi *podInfo, newT int32, newPrice float64, newReq resources.List) bool {
	oldPrice := c.price()
	if newPrice <= oldPrice {
		return false
	}
	return (c.slackOnly(pi) && !s.seeding) || !upsizeOK(c.pool, c.types[0], newT, oldPrice, newPrice, newReq, s.byClass[pi.class].UpsizeTolerance)
}

// costRejects is what add's scan of the claim's types would conclude about
// the price, found without building the narrowed set: the new cheapest
// type is among the first survivors in price order, up to the first type
// whose current price is no lower than the cheapest survivor's new one
// (narrowing offerings only raises prices). None surviving, or a pricier
// cheapest type the accelerator, seed or upsize rule refuses, rejects the
// pod; the seeds' planting is left to the scan.
func (s *pass) costRejects(c *claim, pi *podInfo, term *compiledTerm, a *addition) bool {
	if s.seeding {
		return false
	}
	pl := c.pool
	s.gen++
	newT, newPrice := int32(-1), math.Inf(1)
	for i, t := range c.types {
		if newT >= 0 && pl.types[t].cheapest(c.masks[i]) >= newPrice {
			break
		}
		if m := s.survivingMask(c, pi, term, a, i, t); m != 0 {
			if p := pl.types[t].cheapest(m); p < newPrice {
				newT, newPrice = t, p
			}
		}
	}
	return newT < 0 || s.refusesPrice(c, pi, newT, newPrice, a.newReq)
}

// verifyCostRejects makes add check costRejects against the full scan
// (tests); costRejectsWrong counts the disagreements, costRejected the
// rejections checked.
var (
	verifyCostRejects              bool
	costRejectsWrong, costRejected int
)

func (s *pass) checkCostRejects(c *claim, pi *podInfo, rejects bool, ts []int32, ms []uint64, narrowed bool, newReq resources.List) {
	full := len(ts) == 0 || s.refusesNarrowed(c, pi, ts, ms, narrowed, newReq)
	if rejects {
		costRejected++
	}
	if rejects != full && !s.seeding {
		costRejectsWrong++
	}
}

func (c *claim) addReqs(term *compiledTerm) {
	for _, r := range term.reqs {
		dup := false
		for _, have := range c.reqs {
			if sameReq(have, r) {
				dup = true
				break
			}
		}
		if !dup {
			c.reqs = append(c.reqs, r)
		}
	}
	c.free = append(c.free, term.free...)
}

// freeOK checks that the pool's, the claim's and the new term's requirements
// on each free key the term names can still all hold together.
func freeOK(pl *poolInfo, have, add []req) bool {
	for _, r := range add {
		all := append([]req(nil), pl.free[r.Key]...)
		for _, h := range have {
			if h.Key == r.Key {
				all = append(all, h)
			}
		}
		for _, a := range add {
			if a.Key == r.Key {
				all = append(all, a)
			}
		}
		if !satisfiable(all) {
			return false
		}
	}
	return true
}

// minValuesOK checks the pool's minValues requirements: the first
// MaxInstanceTypes surviving types (and their offerings, for offering keys)
// must together show at least minValues distinct allowed values of the key.
func minValuesOK(pl *poolInfo, ts []int32, ms []uint64) bool {
	for _, r := range pl.minValues {
		seen := map[string]bool{}
		for i, t := range ts {
			if i >= MaxInstanceTypes {
				break
			}
			ti := &pl.types[t]
			if typeLevelKeys[r.Key] {
				if v, has := ti.labels[r.Key]; has && r.Matches(v, true) {
					seen[v] = true
				}
				continue
			}
			for o := range ti.offs {
				if ms[i]&(1<<uint(o)) == 0 {
					continue
				}
				if v, has := offeringValue(r.Key, &ti.offs[o]); has && r.Matches(v, true) {
					seen[v] = true
				}
			}
		}
		if len(seen) < *r.MinValues {
			return false
		}
	}
	return true
}

func sameReq(a, b req) bool {
	if a.Key != b.Key || a.Operator != b.Operator || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		if a.Values[i] != b.Values[i] {
			return false
		}
	}
	return true
}
