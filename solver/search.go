package solver

import (
	"slices"
	"time"
)

// DefaultBudget is Input.Budget's default, zero: the default search, a
// fixed schedule of passes (search.runSchedule) rather than a time
// budget, so its plan does not depend on the machine's speed or load. Its
// work grows with the batch (on 10,000 mixed pods 1.4-3 CPU seconds, 0.9-1.9 s on
// two cores, see docs/performance.md).
const DefaultBudget time.Duration = 0

// scheduleBackstop bounds the default search's wall time: a safety net
// for inputs far larger than the schedule was measured on, past which its
// passes are dropped as under a time budget. A variable so that the
// quality tests measure the schedule, not the load of the machine running
// them.
var scheduleBackstop = 20 * time.Second

// greedyStrategy is the first pass with the default strategies: a loose
// upsize tolerance under a 64-vCPU cap opens few claims, so it is the
// fastest pass on large batches, and within a few percent of the best.
var greedyStrategy = Strategy{VCPUCap: 64, UpsizeTolerance: 1}

// search is Solve's anytime search over packing passes.
type search struct {
	p          *prepared
	strategies []Strategy
	custom     bool // the strategies came from the Input
	lpGuided   bool // run the LP-guided passes (not Input.DisableLPGuided)
	tried      []Strategy
	best       *pass
	bound      float64 // the LP's lower bound (0: none)
	// lps are the configuration LP's solutions, one per warm start, as
	// the background LP delivers them (startLPs).
	lps []chan lpSolution
	// The plain passes: their schedule after the first pass, those run
	// and their passes, in that order.
	plainQueue []Strategy
	ran        []Strategy
	plains     []*pass
	// scheduled: the default search (Input.Budget zero, the default
	// strategies): run stops at the end of its schedule.
	scheduled bool
}

// strictStrategy is a plain pass the default search runs early: the
// strict upsize tolerance without a cap is the cheapest plain pass on most
// mixed batches, often cheaper than every seeded pass. With one capacity
// type it costs about a greedy pass and runs second (see run); with spot
// and on-demand offerings it costs several greedy passes and runs after
// the first seeded pass.
var strictStrategy = Strategy{UpsizeTolerance: 0.05}

// strictCapStrategy and looseCapStrategy are the 32-vCPU cap at each
// tolerance: the capped passes the default search adds beyond the strict
// plain ones (the seeded strict pass from the later warm starts, the
// plain and seeded loose passes), each the best plan on some mixed
// batches.
var (
	strictCapStrategy = Strategy{VCPUCap: 32, UpsizeTolerance: 0.05}
	looseCapStrategy  = Strategy{VCPUCap: 32, UpsizeTolerance: 1}
)

// run returns the best pass found before the deadline (the first pass
// always completes). The configuration LP solves on a goroutine of its
// own (startLPs): from the start, or under a time budget after the first
// pass. Under a time budget or none, the passes
// that win most often come first: the greedy; with one capacity type and
// a quick greedy the plain strictStrategy pass; the LP's first warm start
// (seedShareSteps) and its seeded passes with a strict upsize tolerance,
// the plain strictStrategy pass after the first of them if not run yet;
// the same seeded passes from each further warm start (unless its seeds
// are the same); the other plain passes; the mixed plain pass
// (mixedPlain); the seeded passes with a loose tolerance; then the
// per-class search. The default search runs a fixed schedule instead
// (runSchedule).
func (sr *search) run() *pass {
	p := sr.p
	first := sr.strategies[0]
	if !sr.custom {
		first = greedyStrategy
	}
	t0 := time.Now()
	lp := p.classes > 1 && sr.lpGuided
	// Under a time budget the first pass must not wait for the LP's
	// setup, and an LP started once the budget is spent would be dropped.
	early := p.deadline.IsZero() || sr.scheduled
	if lp && early {
		sr.lps = p.startLPs()
	}
	sr.best = p.run(sr.norm(first), false)
	if lp && !early && !p.expired() {
		sr.lps = p.startLPs()
	}
	// Under a deadline the strict plain pass goes first only when the
	// greedy pass took under an eighth of the budget: it costs one
	// to two greedy passes, and on larger batches the LP must come first
	// to finish in time (there its seeded pass is the cheaper plan).
	quick := p.deadline.IsZero() || 8*time.Since(t0) < p.deadline.Sub(t0)
	p.abortable = true
	for _, st := range sr.strategies {
		if st = sr.norm(st); !slices.Contains(sr.tried, st) {
			sr.tried = append(sr.tried, st)
		}
	}
	sr.ran, sr.plains = []Strategy{sr.norm(first)}, []*pass{sr.best}
	sr.plainQueue = sr.plainSchedule(first)
	if sr.scheduled {
		return sr.runSchedule()
	}
	strictPlain := func() bool { return sr.custom || sr.plain(sr.norm(strictStrategy)) }
	if quick && p.capacityTypes() == 1 && !strictPlain() {
		return sr.best
	}
	seedSets, ok := sr.lpPasses(strictPlain)
	if !ok {
		return sr.best
	}
	for _, st := range sr.plainQueue {
		if !sr.plain(st) {
			return sr.best
		}
	}
	if !sr.mixedPlain(sr.plains) {
		return sr.best
	}
	for _, seeds := range seedSets {
		for _, st := range sr.tried {
			if st.UpsizeTolerance >= 1 && !sr.seeded(st, seeds) {
				return sr.best
			}
		}
	}
	if p.classes > 1 {
		sr.perClass()
	}
	return sr.best
}

// runSchedule is the default search (scheduled): the plain passes of
// plainSchedule and the mixed plain pass while the LP solves, then from
// each warm start the seeded passes of strictStrategy, strictCapStrategy,
// the greedy and looseCapStrategy. The main goroutine seldom waits for the
// LP: the plain passes take about as long as its first warm start, the
// seeded passes of one as its next. On 45 mixed batches of 10,000 pods
// (docs/performance.md) it planned what the whole search did on 44 and
// 0.01% above on the other, at about half its work; the passes it leaves
// out were never the best there.
func (sr *search) runSchedule() *pass {
	for _, st := range sr.plainQueue {
		if !sr.plain(st) {
			return sr.best
		}
	}
	if !sr.mixedPlain(sr.plains) {
		return sr.best
	}
	sr.eachSeedSet(func(_ int, seeds []seed) bool {
		for _, st := range sr.tried {
			if sr.inSchedule(st, true) && !sr.seeded(st, seeds) {
				return false
			}
		}
		return true
	})
	return sr.best
}

// newSeeds waits for the LP's solution from one warm start, keeps its
// bound and returns its seeds, nil when there are none or they are those
// of an earlier warm start (seen).
func (sr *search) newSeeds(lp chan lpSolution, seen [][]seed) []seed {
	seeds, bound := sr.p.lpSeeds(<-lp)
	sr.bound = max(sr.bound, bound)
	if len(seeds) == 0 || slices.ContainsFunc(seen, func(s []seed) bool { return sameSeeds(s, seeds) }) {
		return nil
	}
	return seeds
}

// plainSchedule is the plain passes the search runs after the first, in
// order: the strictStrategy pass, the others of plainOrder in the
// schedule, and in the default search the looseCapStrategy pass.
func (sr *search) plainSchedule(first Strategy) []Strategy {
	var out []Strategy
	if !sr.custom {
		out = append(out, sr.norm(strictStrategy))
	}
	for _, st := range sr.plainOrder(first) {
		if sr.inSchedule(st, false) {
			out = append(out, st)
		}
	}
	if sr.scheduled {
		out = append(out, sr.norm(looseCapStrategy))
	}
	return out
}

// plain runs and offers st's plain pass, once; false when the search is
// over.
func (sr *search) plain(st Strategy) bool {
	if slices.Contains(sr.ran, st) {
		return true
	}
	sr.ran = append(sr.ran, st)
	if sr.done() {
		return false
	}
	s := sr.p.run(st, false)
	if s != nil {
		sr.plains = append(sr.plains, s)
	}
	return sr.offer(s)
}

// mixedPlain runs the plain pass that takes, for each pod class, the
// strategy of the plain pass whose claims opened by that class cost
// least: classes rarely share nodes, so the best strategy of each is
// nearly independent of the others'.
func (sr *search) mixedPlain(plains []*pass) bool {
	p := sr.p
	if p.classes < 2 || len(plains) < 2 {
		return true
	}
	byClass := make([]Strategy, p.classes)
	best := make([]float64, p.classes)
	for i, s := range plains {
		cost := make([]float64, p.classes)
		for _, c := range s.claims {
			cost[c.pods[0].class] += c.price()
		}
		for cl := range cost {
			if i == 0 || cost[cl] < best[cl]-1e-9 {
				best[cl], byClass[cl] = cost[cl], s.byClass[cl]
			}
		}
	}
	if !slices.ContainsFunc(byClass, func(st Strategy) bool { return st != byClass[0] }) {
		return true // one strategy: that pass ran
	}
	return !sr.done() && sr.offer(p.runClasses(byClass, false, -1))
}

// lpPasses takes the configuration LP's solution from each warm start of
// seedShareSteps and runs the seeded passes of the strict strategies from
// its seeds, the plain strictStrategy pass after the first; it returns the
// distinct seed sets, false when the search is over.
func (sr *search) lpPasses(strictPlain func() bool) ([][]seed, bool) {
	return sr.eachSeedSet(func(k int, seeds []seed) bool {
		for i, st := range sr.tried {
			if st.UpsizeTolerance >= 1 {
				continue
			}
			if !sr.seeded(st, seeds) || (k == 0 && i == 0 && !strictPlain()) {
				return false
			}
		}
		return true
	})
}

// eachSeedSet calls run with the k-th warm start's seeds, for each warm
// start whose seeds are new (newSeeds), until the search is done or run
// returns false; it returns the seed sets given to run, and false when
// run stopped it.
func (sr *search) eachSeedSet(run func(k int, seeds []seed) bool) ([][]seed, bool) {
	var seedSets [][]seed
	for k, lp := range sr.lps {
		if sr.done() {
			break
		}
		seeds := sr.newSeeds(lp, seedSets)
		if seeds == nil {
			continue
		}
		seedSets = append(seedSets, seeds)
		if !run(k, seeds) {
			return seedSets, false
		}
	}
	return seedSets, true
}

// inSchedule says whether the search runs st's pass (seeded or plain):
// every one in the whole search; in the default search (scheduled) the
// passes runSchedule lists. The first pass and the plain strictStrategy
// and looseCapStrategy passes run apart from this.
func (sr *search) inSchedule(st Strategy, seeded bool) bool {
	switch {
	case !sr.scheduled:
		return true
	case seeded:
		return slices.Contains([]Strategy{sr.norm(strictStrategy), sr.norm(strictCapStrategy), sr.norm(greedyStrategy), sr.norm(looseCapStrategy)}, st)
	}
	return st.UpsizeTolerance < 1 && (st.VCPUCap == 0 || st.VCPUCap >= 32)
}

// seeded runs the seeded pass of st; false when the search is over.
func (sr *search) seeded(st Strategy, seeds []seed) bool {
	return !sr.done() && sr.offer(sr.p.runSeeded(uniform(st, sr.p.classes), false, -1, seeds))
}

// norm maps a cap at or above every type's vCPUs (or negative) to none.
func (sr *search) norm(st Strategy) Strategy {
	if st.VCPUCap >= sr.p.maxVCPU || st.VCPUCap < 0 {
		st.VCPUCap = 0
	}
	return st
}

// plainOrder is the strategies left for plain passes: loose tolerances
// first (their passes open few claims and run fastest), then the strict
// ones, each in grid order, without the first pass's.
func (sr *search) plainOrder(first Strategy) []Strategy {
	var loose, strict []Strategy
	for _, st := range sr.tried {
		switch {
		case st == sr.norm(first):
		case st.UpsizeTolerance >= 1:
			loose = append(loose, st)
		default:
			strict = append(strict, st)
		}
	}
	return append(loose, strict...)
}

// perClass: for each class, each other strategy for that class alone, the
// rest fixed, seeded as the best plan is; keeps what is better.
func (sr *search) perClass() {
	p := sr.p
	for c := 0; c < p.classes; c++ {
		for _, st := range sr.tried {
			if sr.done() {
				return
			}
			if st == sr.best.byClass[c] || (!sr.custom && !refineCap(st.VCPUCap)) {
				continue
			}
			byClass := slices.Clone(sr.best.byClass)
			byClass[c] = st
			if !sr.offer(p.runSeeded(byClass, false, -1, sr.best.seeds)) {
				return
			}
		}
	}
}

// offer keeps s when it beats the best pass; false when s was cut off.
func (sr *search) offer(s *pass) bool {
	if s == nil {
		return false
	}
	if s.better(sr.best) {
		sr.best = s
	}
	return true
}

// done: the deadline passed, or the best plan places every pod at no more
// than the LP's lower bound.
func (sr *search) done() bool {
	b := sr.best
	return sr.p.expired() || (sr.bound > 0 && len(b.unsched) == 0 && b.price <= sr.bound*(1+1e-9))
}

func uniform(st Strategy, classes int) []Strategy {
	out := make([]Strategy, classes)
	for i := range out {
		out[i] = st
	}
	return out
}

// capacityTypes is how many capacity types the pools' offerings have.
func (p *prepared) capacityTypes() int {
	var seen []string
	for _, pl := range p.pools {
		for t := range pl.types {
			for i, o := range pl.types[t].offs {
				if pl.base[t]&(1<<uint(i)) != 0 && !slices.Contains(seen, o.CapacityType) {
					seen = append(seen, o.CapacityType)
				}
			}
		}
	}
	return len(seen)
}
