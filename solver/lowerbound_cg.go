package solver

import (
	"math"

	"github.com/joinery/joinery/solver/internal/lp"
	"github.com/joinery/joinery/solver/resources"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Budgets and tolerances of the configuration-LP bound (configLPBound).
// Budgets count work, not time, so the bound is the same on every machine.
const (
	cgMaxRounds     = 300        // column-generation rounds
	cgFinalRounds   = 30         // final pricings (larger budgets) that may end without a column
	cgColsPerRound  = 40         // new columns per round (at least; half the groups if more)
	cgMasterPivots  = 5000       // simplex pivots per master solve
	cgTotalWork     = 1200000000 // simplex multiply-adds, DP cells and B&B bound terms, all rounds
	cgImprove       = 1e-6       // a column must beat its bin's price by this (relative)
	cgPruneSlack    = 1e-6       // branch and bound proves optima to this (relative)
	cgSafety        = 1e-9       // the returned bound is shrunk by this (relative) against rounding
	cgStallRounds   = 20         // rounds without a better bound before giving up
	cgStallRelative = 1e-4       // "better" means by this much (relative)
	cgSmoothing     = 0.8        // weight of the best dual so far in the pricing point
	cgMaxCols       = 1500       // master columns kept (the worst priced go beyond)
	cgPriceBins     = 40         // bins priced per round when some yield columns
	cgGapStop       = 1e-4       // stop when the master's value is this close (relative)
	cgMaxRows       = 500        // groups (master rows) beyond which the bound is skipped
	cgMaxBinItems   = 500000     // Σ over bins of their groups beyond which it is skipped
	cgMaxBins       = 8000       // bins (type, price level) beyond which it is skipped
)

// Per bin pricing budgets, usual and final (variables for the tests).
var (
	cgDPCells = [2]int{10000000, 60000000} // dynamic program: grid cells × count chunks
	cgBBWork  = [2]int{200000, 20000000}   // branch and bound: bound terms
)

// configBin is a bin of the configuration LP: a node of one type of one pool
// at price level price, which may hold the groups in groups (those whose
// cheapest compatible offering of the type costs at most price).
type configBin struct {
	pool    *poolInfo
	typ     int32
	price   float64
	cap     []int64 // usable resources, over the bound's dims
	groups  []int32
	allowed []uint64 // groups as a bitset
}

// configLPBound is the configuration-LP bound of LowerBound, see there.
// groups are boundGroups(p).
func configLPBound(p *prepared, groups []*boundGroup, start []float64) float64 {
	b, _ := configLP(p, groups, start, false, cgGapStop)
	return b
}

// lpConfiguration is one configuration of the configuration LP's final master
// solution: x nodes of bin's type (pool, typ, at price level price), each
// holding counts[g] pods of group g.
type lpConfiguration struct {
	pool   *poolInfo
	typ    int32
	price  float64
	x      float64
	counts []int64
}

// configLP is configLPBound, stopping when the master's value is within gap
// (relative) of the bound; with primal set it also returns the final
// master's solution (the configurations with x > 0, in variable order).
// Its stages: the bins, pruned of free groups and dominated bins; the
// master over the initial columns; column generation.
func configLP(p *prepared, groups []*boundGroup, start []float64, primal bool, gap float64) (float64, []lpConfiguration) {
	G := len(groups)
	if G == 0 {
		return 0, nil
	}
	dims := boundDims(groups)
	bins, free := configBins(p, groups, dims)
	if len(bins) > cgMaxBins {
		return 0, nil // the dominance pass is quadratic
	}
	limits := limitRows(p)
	bins, ok := pruneBins(p, bins, free, G, limits)
	if !ok {
		return 0, nil // past Solve's deadline
	}
	m := newConfigMaster(groups, bins, dims, limits)
	if m == nil {
		return 0, nil
	}
	cg := newColumnGeneration(p, m, start)
	cg.run(gap)
	var sol []lpConfiguration
	if primal {
		sol = m.solution()
	}
	return cg.best * (1 - cgSafety), sol
}

// boundDims are the resources some group requests (the bound's dims).
func boundDims(groups []*boundGroup) []int {
	var dims []int
	for r := range groups[0].req {
		for _, g := range groups {
			if g.req[r] > 0 {
				dims = append(dims, r)
				break
			}
		}
	}
	return dims
}

// configBins are the bins: per pool type, one per distinct price of its
// compatible groups, each admitting the groups at or below that price.
// free marks the groups some zero-price node holds (they keep y = 0).
func configBins(p *prepared, groups []*boundGroup, dims []int) (bins []*configBin, free []bool) {
	G, D := len(groups), len(dims)
	words := (G + 63) / 64
	free = make([]bool, G)
	type gp struct {
		g     int32
		price float64
	}
	var compat []gp
	for _, pl := range p.pools {
		for t := range pl.types {
			compat = compat[:0]
			for gi, g := range groups {
				price, ok := g.priceOn(pl, t)
				if !ok || price < 0 || math.IsNaN(price) {
					continue
				}
				compat = append(compat, gp{int32(gi), price})
			}
			if len(compat) == 0 {
				continue
			}
			sort.SliceStable(compat, func(i, j int) bool { return compat[i].price < compat[j].price })
			cp := make([]int64, D)
			for d, r := range dims {
				cp[d] = pl.usable[t][r]
			}
			for i := 0; i < len(compat); {
				j := i
				for j < len(compat) && compat[j].price == compat[i].price {
					j++
				}
				level := compat[i].price
				if level <= 0 {
					for _, c := range compat[:j] {
						free[c.g] = true
					}
				} else {
					b := &configBin{pool: pl, typ: int32(t), price: level, cap: cp, allowed: make([]uint64, words)}
					for _, c := range compat[:j] {
						b.allowed[c.g/64] |= 1 << (c.g % 64)
					}
					bins = append(bins, b)
				}
				i = j
			}
		}
	}
	return bins, free
}

// pruneBins drops free groups, then dominated bins: a bin no cheaper, no
// larger and admitting no more groups than another adds nothing (every
// configuration of it is one of the other at no lower price). It reports
// false when Solve's deadline passed.
func pruneBins(p *prepared, bins []*configBin, free []bool, G int, limits []limitRow) ([]*configBin, bool) {
	kept := bins[:0]
	for _, b := range bins {
		for g := range free {
			if free[g] {
				b.allowed[g/64] &^= 1 << (g % 64)
			}
		}
		for g := 0; g < G; g++ {
			if b.allowed[g/64]&(1<<(g%64)) != 0 {
				b.groups = append(b.groups, int32(g))
			}
		}
		if len(b.groups) > 0 {
			kept = append(kept, b)
		}
	}
	bins = kept
	order := make([]int, len(bins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return bins[order[i]].price < bins[order[j]].price })
	var live []*configBin
	for oi, b := range order {
		if oi%64 == 0 && p.expired() {
			return nil, false
		}
		dom := false
		for _, a := range order[:oi] { // cheaper or equal price first
			if binDominates(bins, a, b, limits) {
				dom = true
				break
			}
		}
		for _, a := range order[oi+1:] {
			if dom || bins[a].price > bins[b].price {
				break
			}
			dom = binDominates(bins, a, b, limits)
		}
		if !dom {
			live = append(live, bins[b])
		}
	}
	return live, true
}

// binDominates reports whether bins[a] ≻ bins[b]: no pricier, no smaller,
// admitting every group b does, counting no more against any limit, and
// strictly better in one of these or earlier.
func binDominates(bins []*configBin, a, b int, limits []limitRow) bool {
	x, y := bins[a], bins[b]
	if x.price > y.price {
		return false
	}
	for _, l := range limits {
		if l.coef(x) > l.coef(y) {
			return false
		}
	}
	strict := x.price < y.price
	for d := range x.cap {
		if x.cap[d] < y.cap[d] {
			return false
		}
		strict = strict || x.cap[d] > y.cap[d]
	}
	for w := range x.allowed {
		if y.allowed[w]&^x.allowed[w] != 0 {
			return false
		}
		strict = strict || x.allowed[w] != y.allowed[w]
	}
	return strict || a < b
}

// limitRow is a NodePool limit as a row of the configuration LP: the
// nodes of pool sum at most rem (the limit less the pool's usage) of one
// resource's capacity (res), or of nodes (res < 0). A plan's NodeClaim
// counts its largest type's capacity against the limit, at least its
// cheapest type's, so every plan stays within the rows.
type limitRow struct {
	pool *poolInfo
	res  int
	rem  float64
}

func limitRows(p *prepared) []limitRow {
	var rows []limitRow
	for _, pl := range p.pools {
		np := pl.np
		for r := 0; r < resources.Count; r++ {
			if np.HasLimit[r] {
				rows = append(rows, limitRow{pl, r, max(float64(np.Limits[r]-np.Usage[r]), 0)})
			}
		}
		if np.NodesLimit >= 0 {
			rows = append(rows, limitRow{pl, -1, float64(max(np.NodesLimit-np.NodeCount, 0))})
		}
	}
	return rows
}

// coef is what one node of bin b counts against the limit.
func (l limitRow) coef(b *configBin) float64 {
	switch {
	case b.pool != l.pool:
		return 0
	case l.res < 0:
		return 1
	}
	return float64(b.pool.types[b.typ].opt.Shape.Capacity[l.res])
}

// overflowCost prices a unit over the limit in the master: ten times
// the dearest price per unit of any of its bins, so that the master's
// optimum keeps within it where it can.
func (l limitRow) overflowCost(bins []*configBin) float64 {
	c := 1.0
	for _, b := range bins {
		if v := l.coef(b); v > 0 {
			c = max(c, 10*b.price/v)
		}
	}
	return c
}

// configMaster is the master LP of the column generation: one row per
// group some bin holds (rows ≥ n_g) and one per NodePool limit (limitRow),
// one column per configuration found so far (its bin's price), a surplus
// column per group row, and a slack and a costly overflow column per limit
// row (the overflow keeps the starting basis feasible).
type configMaster struct {
	groups []*boundGroup
	bins   []*configBin
	reqs   [][]int64  // per group, over the bound's dims
	row    []int      // master row of each group, -1 none
	rowG   []int      // group of each row
	limits []limitRow // rows len(rowG)... of the master
	fixed  int        // the initial columns, surplus, slack and overflow variables
	lp     *lp.Bounded
	seen   map[string]bool // the configurations in the master, by key
	// Per master variable, its bin (-1 surplus) and its key in seen.
	colBin  []int
	colKeys []string
}

// newConfigMaster builds the master over the initial columns (each group
// alone on its cheapest bin per pod) with them as the basis; nil when no
// group has a bin, the instance is too large for a dense master and
// per-bin LPs (LowerBound keeps the share bound), or the basis is
// singular.
func newConfigMaster(groups []*boundGroup, bins []*configBin, dims []int, limits []limitRow) *configMaster {
	G, D := len(groups), len(dims)
	m := &configMaster{groups: groups, bins: bins, reqs: make([][]int64, G), row: make([]int, G), limits: limits, seen: map[string]bool{}}
	for gi, g := range groups {
		m.reqs[gi] = make([]int64, D)
		for d, r := range dims {
			m.reqs[gi][d] = g.req[r]
		}
	}
	type homog struct {
		bin int
		k   int64
		per float64
	}
	first := make([]homog, G)
	for g := range first {
		first[g] = homog{bin: -1, per: math.Inf(1)}
	}
	for bi, b := range bins {
		for _, g := range b.groups {
			if k := maxFitAlone(b.cap, m.reqs[g], groups[g].cap()); k > 0 && b.price/float64(k) < first[g].per {
				first[g] = homog{bi, k, b.price / float64(k)}
			}
		}
	}
	for g := range m.row {
		m.row[g] = -1
		if first[g].bin >= 0 {
			m.row[g] = len(m.rowG)
			m.rowG = append(m.rowG, g)
		}
	}
	M := len(m.rowG)
	items := 0
	for _, b := range bins {
		items += len(b.groups)
	}
	if M == 0 || M > cgMaxRows || items > cgMaxBinItems {
		return nil
	}
	rhs := make([]float64, M, M+len(limits))
	for i, g := range m.rowG {
		rhs[i] = float64(groups[g].n)
	}
	for _, l := range limits {
		rhs = append(rhs, l.rem)
	}
	m.lp = lp.New(rhs)
	basis := make([]int, M, M+len(limits))
	ks := make([]int64, G)
	used := make([]float64, len(limits)) // by the initial columns
	for i, g := range m.rowG {
		clear(ks)
		ks[g] = first[g].k
		basis[i] = m.addCol(first[g].bin, ks)
		for li, l := range limits {
			used[li] += l.coef(bins[first[g].bin]) * float64(groups[g].n) / float64(first[g].k)
		}
	}
	for i := range m.rowG { // surplus variables
		m.lp.AddVar(lp.Column{Rows: []int32{int32(i)}, Values: []float64{-1}}, 0, math.Inf(1))
	}
	for li, l := range limits {
		row := []int32{int32(M + li)}
		slack := m.lp.AddVar(lp.Column{Rows: row, Values: []float64{1}}, 0, math.Inf(1))
		over := m.lp.AddVar(lp.Column{Rows: row, Values: []float64{-1}}, l.overflowCost(bins), math.Inf(1))
		if used[li] <= l.rem {
			basis = append(basis, slack)
		} else {
			basis = append(basis, over)
		}
	}
	m.fixed = m.lp.NumVars()
	if !m.lp.SetBasis(basis) {
		return nil
	}
	return m
}

// colKey names configuration ks of bin (for seen).
func colKey(bin int, ks []int64) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(bin))
	for g, k := range ks {
		if k > 0 {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(g))
			sb.WriteByte(':')
			sb.WriteString(strconv.FormatInt(k, 10))
		}
	}
	return sb.String()
}

// addCol adds configuration ks of bin to the master and returns its
// variable.
func (m *configMaster) addCol(bin int, ks []int64) int {
	var c lp.Column
	for g, k := range ks {
		if k > 0 {
			c.Rows = append(c.Rows, int32(m.row[g]))
			c.Values = append(c.Values, float64(k))
		}
	}
	for li, l := range m.limits {
		if v := l.coef(m.bins[bin]); v > 0 {
			c.Rows = append(c.Rows, int32(len(m.rowG)+li))
			c.Values = append(c.Values, v)
		}
	}
	key := colKey(bin, ks)
	m.seen[key] = true
	j := m.lp.AddVar(c, m.bins[bin].price, math.Inf(1))
	for len(m.colBin) <= j {
		m.colBin = append(m.colBin, -1)
		m.colKeys = append(m.colKeys, "")
	}
	m.colBin[j], m.colKeys[j] = bin, key
	return j
}

// dropWorstColumns drops the generated columns priced worst under the
// master's duals, down to two thirds of cgMaxCols (they may come back).
func (m *configMaster) dropWorstColumns() {
	duals := m.lp.Duals()
	type rc struct {
		j int
		d float64
	}
	var rcs []rc
	for j := m.fixed; j < m.lp.NumVars(); j++ {
		if m.lp.Basic(j) {
			continue
		}
		rcs = append(rcs, rc{j, m.lp.ReducedCost(j, duals)})
	}
	sort.SliceStable(rcs, func(a, b int) bool { return rcs[a].d > rcs[b].d })
	drop := make([]bool, m.lp.NumVars())
	for _, x := range rcs[:min(len(rcs), m.lp.NumVars()-cgMaxCols*2/3)] {
		drop[x.j] = true
		delete(m.seen, m.colKeys[x.j])
	}
	newIdx := m.lp.RemoveVars(drop)
	for j, nj := range newIdx {
		if nj >= 0 {
			m.colBin[nj], m.colKeys[nj] = m.colBin[j], m.colKeys[j]
		}
	}
	m.colBin, m.colKeys = m.colBin[:m.lp.NumVars()], m.colKeys[:m.lp.NumVars()]
}

// solution is the master's current primal solution: the configurations
// with x > 0, in variable order.
func (m *configMaster) solution() []lpConfiguration {
	var sol []lpConfiguration
	x := make([]float64, m.lp.NumVars())
	m.lp.Values(x)
	for j, v := range x {
		if j >= len(m.colBin) || m.colBin[j] < 0 || v <= 1e-9 {
			continue
		}
		b := m.bins[m.colBin[j]]
		c := lpConfiguration{pool: b.pool, typ: b.typ, price: b.price, x: v, counts: make([]int64, len(m.groups))}
		col := m.lp.Col(j)
		for k, r := range col.Rows {
			if int(r) < len(m.rowG) {
				c.counts[m.rowG[r]] = int64(math.Round(col.Values[k]))
			}
		}
		sol = append(sol, c)
	}
	return sol
}

// candidate is a priced configuration ks of bin, by its value under y per
// unit of the bin's price.
type candidate struct {
	bin   int
	ratio float64
	ks    []int64
}

// columnGeneration is the state of the rounds: the pricing point, the
// best dual so far (the stability center), per bin upper bounds on the
// knapsack optimum, and the best Farley bound.
type columnGeneration struct {
	p      *prepared
	m      *configMaster
	pr     *binPricer
	y      []float64 // the pricing point
	center []float64 // the best dual so far, scaled to θ = 1
	// mu and muCenter are the limit rows' multipliers (≥ 0) at the
	// pricing point and the center; shift is what each bin's node costs
	// under mu, added to its price in the pricing and in θ.
	mu, muCenter, shift []float64
	centerLB            float64
	shareLB             float64
	us                  []float64 // upper bound on each bin's knapsack under y
	rank                []int
	done                []bool // us cannot be tightened further
	best                float64
	stall               int
	finals              int
	work                int
	pure                bool // price at the master's duals, unsmoothed
	cands               []candidate
}

func newColumnGeneration(p *prepared, m *configMaster, start []float64) *columnGeneration {
	G, nb := len(m.groups), len(m.bins)
	cg := &columnGeneration{
		p: p, m: m, pr: newBinPricer(G, len(m.reqs[0]), m.reqs, m.groups),
		y: make([]float64, G), center: make([]float64, G),
		mu: make([]float64, len(m.limits)), muCenter: make([]float64, len(m.limits)), shift: make([]float64, nb),
		us: make([]float64, nb), rank: make([]int, nb), done: make([]bool, nb),
	}
	if len(start) == G {
		for g, v := range start {
			if m.row[g] >= 0 {
				cg.center[g] = max(v, 0)
				cg.centerLB += float64(m.groups[g].n) * cg.center[g]
			}
		}
	}
	cg.shareLB = cg.centerLB
	return cg
}

// run is the column generation: each round solves the master, prices the
// bins at a smoothed point, tightens the Farley bound and adds the best
// columns, until a budget, a stall, or the master's value is within gap
// of the bound.
func (cg *columnGeneration) run(gap float64) {
	m := cg.m
	for round := 0; round < cgMaxRounds && cg.work < cgTotalWork && cg.stall < cgStallRounds && !cg.p.expired(); round++ {
		ops0 := m.lp.Ops()
		m.lp.Solve(cgMasterPivots)
		cg.work += m.lp.Ops() - ops0
		alpha, z := cg.pricingPoint(m.lp.Duals())
		cg.cands = cg.cands[:0]
		cg.pricePartial()
		cg.priceFinal()
		cg.tighten(z)
		// The master's primal value bounds the LP optimum, hence every
		// Farley bound, from above: stop when it is within reach.
		if m.lp.Objective() <= max(cg.best, cg.shareLB)*(1+gap) {
			break
		}
		added := cg.addColumns()
		if m.lp.NumVars() > cgMaxCols {
			m.dropWorstColumns()
		}
		if added == 0 {
			if cg.pure || alpha == 0 {
				break
			}
			cg.pure = true // nothing at the smoothed point: try the master's duals
			continue
		}
		cg.pure = false
	}
}

// pricingPoint sets y and μ between the master's duals and the best dual
// so far (Wentges' smoothing), which damps the duals' swings; it returns
// the smoothing weight and the dual objective Σ_g n_g·y_g − Σ_l μ_l·rem_l.
func (cg *columnGeneration) pricingPoint(duals []float64) (alpha, z float64) {
	alpha = cgSmoothing
	if cg.pure || cg.centerLB == 0 {
		alpha = 0
	}
	m := cg.m
	for i, g := range m.rowG {
		cg.y[g] = alpha*cg.center[g] + (1-alpha)*max(duals[i], 0)
		z += float64(m.groups[g].n) * cg.y[g]
	}
	clear(cg.shift)
	for li, l := range m.limits {
		// A limit row's dual is ≤ 0 (its slack's reduced cost is −dual).
		cg.mu[li] = alpha*cg.muCenter[li] + (1-alpha)*max(-duals[len(m.rowG)+li], 0)
		z -= cg.mu[li] * l.rem
		if cg.mu[li] > 0 {
			for bi, b := range m.bins {
				cg.shift[bi] += cg.mu[li] * l.coef(b)
			}
		}
	}
	return alpha, z
}

// ratio is bin bi's value bound under the pricing point per unit of its
// price with the limits' multipliers.
func (cg *columnGeneration) ratio(bi int) float64 {
	return (cg.us[bi] - cg.shift[bi]) / cg.m.bins[bi].price
}

// pricePartial solves the bins whose cheap bound (their last LP
// multipliers) is worst; the others keep the cheap bound. All of them
// when those yield no column.
func (cg *columnGeneration) pricePartial() {
	bins, D := cg.m.bins, cg.pr.D
	for bi, b := range bins {
		cg.us[bi], cg.done[bi] = cg.pr.cheap(bi, b, cg.y), false
		cg.work += len(b.groups) * D
		cg.rank[bi] = bi
	}
	rank, us := cg.rank, cg.us
	sort.SliceStable(rank, func(a, b int) bool { return cg.ratio(rank[a]) > cg.ratio(rank[b]) })
	for k, bi := range rank {
		if k >= cgPriceBins && len(cg.cands) > 0 {
			break
		}
		b := bins[bi]
		if cg.ratio(bi) <= 1+cgImprove {
			break // and so are the rest
		}
		u, ks, exact, w := cg.pr.price(bi, b, cg.y, b.price+cg.shift[bi], 0)
		cg.work += w
		us[bi], cg.done[bi] = min(us[bi], u), exact
		if ks != nil {
			cg.addCand(bi, ks)
		}
	}
}

// priceFinal: with no improving column at the usual effort, spend the
// larger budgets on the bins that set θ, worst first, until one yields a
// column or the worst one cannot be tightened.
func (cg *columnGeneration) priceFinal() {
	bins := cg.m.bins
	for len(cg.cands) == 0 && cg.finals < cgFinalRounds {
		wi, wr, dr := -1, 0.0, 0.0
		for bi := range bins {
			r := cg.ratio(bi)
			if cg.done[bi] {
				dr = max(dr, r)
			} else if r > wr {
				wi, wr = bi, r
			}
		}
		if wi < 0 || wr <= dr || wr <= 1+cgImprove {
			cg.finals++
			break
		}
		u, ks, _, w := cg.pr.price(wi, bins[wi], cg.y, bins[wi].price+cg.shift[wi], 1)
		cg.work += w
		cg.us[wi], cg.done[wi] = min(cg.us[wi], u), true
		if ks != nil {
			cg.addCand(wi, ks)
		}
	}
}

// tighten computes Farley's bound z/θ at (y, μ), θ = max_b (U_b(y) −
// μ·a_b)/π_b with a_b what b's node counts against the limits ((y, μ)/θ
// is dual feasible), keeps the best (counting a stall when it is not
// better by cgStallRelative) and moves the center to (y, μ)/θ when it
// beats the center's bound.
func (cg *columnGeneration) tighten(z float64) {
	theta := 0.0
	for bi := range cg.m.bins {
		theta = max(theta, cg.ratio(bi))
	}
	if theta <= 0 || z <= 0 {
		return
	}
	lb := z / theta
	if lb > cg.best*(1+cgStallRelative) {
		cg.best, cg.stall = lb, 0
	} else {
		cg.best, cg.stall = max(cg.best, lb), cg.stall+1
	}
	if lb > cg.centerLB {
		for g := range cg.center {
			cg.center[g] = cg.y[g] / theta
		}
		for li := range cg.muCenter {
			cg.muCenter[li] = cg.mu[li] / theta
		}
		cg.centerLB = lb
	}
}

// addCand records configuration ks of bin bi, only if it fits (a guard:
// pricing returns no other).
func (cg *columnGeneration) addCand(bi int, ks []int64) {
	m := cg.m
	use := make([]int64, cg.pr.D)
	v := 0.0
	for g, k := range ks {
		if k < 0 || k > int64(m.groups[g].cap()) || (k > 0 && !slices.Contains(m.bins[bi].groups, int32(g))) {
			return
		}
		for d, q := range m.reqs[g] {
			use[d] += k * q
		}
		v += float64(k) * cg.y[g]
	}
	for d, u := range use {
		if u > m.bins[bi].cap[d] {
			return
		}
	}
	cg.cands = append(cg.cands, candidate{bi, (v - cg.shift[bi]) / m.bins[bi].price, ks})
}

// addColumns adds the best candidates not yet in the master, at most
// max(cgColsPerRound, rows/2), and returns how many.
func (cg *columnGeneration) addColumns() int {
	m := cg.m
	sort.SliceStable(cg.cands, func(i, j int) bool { return cg.cands[i].ratio > cg.cands[j].ratio })
	added := 0
	for _, c := range cg.cands {
		if added == max(cgColsPerRound, len(m.rowG)/2) {
			break
		}
		if m.seen[colKey(c.bin, c.ks)] {
			continue
		}
		m.addCol(c.bin, c.ks)
		added++
	}
	return added
}
