package solver

import (
	"math"

	"github.com/joinery/joinery/solver/internal/lp"
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

// cgBin is a bin of the configuration LP: a node of one type of one pool
// at price level price, which may hold the groups in groups (those whose
// cheapest compatible offering of the type costs at most price).
type cgBin struct {
	pool    *poolInfo
	typ     int32
	price   float64
	cap     []int64 // usable resources, over the bound's dims
	groups  []int32
	allowed []uint64 // groups as a bitset
}

// configLPBound is the configuration-LP bound of LowerBound, see there.
// groups are lbGroups(p).
func configLPBound(p *prepared, groups []*lbGroup, start []float64) float64 {
	b, _ := configLP(p, groups, start, false, cgGapStop)
	return b
}

// cgConfig is one configuration of the configuration LP's final master
// solution: x nodes of bin's type (pool, typ, at price level price), each
// holding counts[g] pods of group g.
type cgConfig struct {
	pool   *poolInfo
	typ    int32
	price  float64
	x      float64
	counts []int64
}

// configLP is configLPBound, stopping when the master's value is within gap
// (relative) of the bound; with primal set it also returns the final
// master's solution (the configurations with x > 0, in variable order).
func configLP(p *prepared, groups []*lbGroup, start []float64, primal bool, gap float64) (float64, []cgConfig) {
	G := len(groups)
	if G == 0 {
		return 0, nil
	}
	var dims []int
	for r := range groups[0].req {
		for _, g := range groups {
			if g.req[r] > 0 {
				dims = append(dims, r)
				break
			}
		}
	}
	D := len(dims)
	words := (G + 63) / 64

	// Bins: per pool type, one per distinct price of its compatible groups.
	var bins []*cgBin
	free := make([]bool, G) // some zero-price node holds the group: y = 0
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
					b := &cgBin{pool: pl, typ: int32(t), price: level, cap: cp, allowed: make([]uint64, words)}
					for _, c := range compat[:j] {
						b.allowed[c.g/64] |= 1 << (c.g % 64)
					}
					bins = append(bins, b)
				}
				i = j
			}
		}
	}
	if len(bins) > cgMaxBins {
		return 0, nil // the dominance pass is quadratic
	}
	// Drop free groups, then dominated bins: a bin no cheaper, no larger
	// and admitting no more groups than another adds nothing (every
	// configuration of it is one of the other at no lower price).
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
	dominates := func(a, b int) bool { // a ≻ b
		x, y := bins[a], bins[b]
		if x.price > y.price {
			return false
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
	order := make([]int, len(bins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return bins[order[i]].price < bins[order[j]].price })
	var live []*cgBin
	for oi, b := range order {
		if oi%64 == 0 && p.expired() {
			return 0, nil // past Solve's deadline
		}
		dom := false
		for _, a := range order[:oi] { // cheaper or equal price first
			if dominates(a, b) {
				dom = true
				break
			}
		}
		for _, a := range order[oi+1:] {
			if dom || bins[a].price > bins[b].price {
				break
			}
			dom = dominates(a, b)
		}
		if !dom {
			live = append(live, bins[b])
		}
	}
	bins = live

	// Groups that some bin holds; the rest keep y = 0.
	reqs := make([][]int64, G)
	for gi, g := range groups {
		reqs[gi] = make([]int64, D)
		for d, r := range dims {
			reqs[gi][d] = g.req[r]
		}
	}
	maxFit := func(b *cgBin, g int) int64 { return cgMaxFit(b.cap, reqs[g], groups[g].cap()) }
	// Initial columns: each group alone on its cheapest bin per pod.
	row := make([]int, G) // master row of each group, -1 none
	var rowG []int
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
			if k := maxFit(b, int(g)); k > 0 && b.price/float64(k) < first[g].per {
				first[g] = homog{bi, k, b.price / float64(k)}
			}
		}
	}
	for g := range row {
		row[g] = -1
		if first[g].bin >= 0 {
			row[g] = len(rowG)
			rowG = append(rowG, g)
		}
	}
	M := len(rowG)
	items := 0
	for _, b := range bins {
		items += len(b.groups)
	}
	if M == 0 || M > cgMaxRows || items > cgMaxBinItems {
		return 0, nil // too large for a dense master / per-bin LPs: LowerBound keeps the share bound
	}
	rhs := make([]float64, M)
	for i, g := range rowG {
		rhs[i] = float64(groups[g].n)
	}
	master := lp.New(rhs)
	seen := map[string]bool{}
	var colBin []int     // per master variable, its bin (-1 surplus)
	var colKeys []string // per master variable, its key in seen
	colKey := func(bin int, ks []int64) string {
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
	addCol := func(bin int, ks []int64) int {
		var c lp.Column
		for g, k := range ks {
			if k > 0 {
				c.Rows = append(c.Rows, int32(row[g]))
				c.Values = append(c.Values, float64(k))
			}
		}
		key := colKey(bin, ks)
		seen[key] = true
		j := master.AddVar(c, bins[bin].price, math.Inf(1))
		for len(colBin) <= j {
			colBin = append(colBin, -1)
			colKeys = append(colKeys, "")
		}
		colBin[j], colKeys[j] = bin, key
		return j
	}
	basis := make([]int, M)
	ks := make([]int64, G)
	for i, g := range rowG {
		clear(ks)
		ks[g] = first[g].k
		basis[i] = addCol(first[g].bin, ks)
	}
	for i := range rowG { // surplus variables
		master.AddVar(lp.Column{Rows: []int32{int32(i)}, Values: []float64{-1}}, 0, math.Inf(1))
	}
	if !master.SetBasis(basis) {
		return 0, nil
	}

	pr := newCGPricer(G, D, reqs, groups)
	y := make([]float64, G)      // the pricing point
	center := make([]float64, G) // the best dual so far, scaled to θ = 1
	centerLB := 0.0
	if len(start) == G {
		for g, v := range start {
			if row[g] >= 0 {
				center[g] = max(v, 0)
				centerLB += float64(groups[g].n) * center[g]
			}
		}
	}
	shareLB := centerLB
	us := make([]float64, len(bins)) // upper bound on each bin's knapsack under y
	rank := make([]int, len(bins))
	done := make([]bool, len(bins)) // us cannot be tightened further
	best, stall, finals, work := 0.0, 0, 0, 0
	pure := false
	type cand struct {
		bin   int
		ratio float64
		ks    []int64
	}
	var cands []cand
	addCand := func(bi int, ks []int64) {
		// Only configurations that fit (a guard: pricing returns no other).
		use := make([]int64, D)
		v := 0.0
		for g, k := range ks {
			if k < 0 || k > int64(groups[g].cap()) || (k > 0 && !slices.Contains(bins[bi].groups, int32(g))) {
				return
			}
			for d, q := range reqs[g] {
				use[d] += k * q
			}
			v += float64(k) * y[g]
		}
		for d, u := range use {
			if u > bins[bi].cap[d] {
				return
			}
		}
		cands = append(cands, cand{bi, v / bins[bi].price, ks})
	}
	for round := 0; round < cgMaxRounds && work < cgTotalWork && stall < cgStallRounds && !p.expired(); round++ {
		ops0 := master.Ops()
		master.Solve(cgMasterPivots)
		work += master.Ops() - ops0
		duals := master.Duals()
		// Price at a point between the master's duals and the best dual
		// so far (Wentges' smoothing), which damps the duals' swings.
		alpha := cgSmoothing
		if pure || centerLB == 0 {
			alpha = 0
		}
		z := 0.0
		for i, g := range rowG {
			y[g] = alpha*center[g] + (1-alpha)*max(duals[i], 0)
			z += float64(groups[g].n) * y[g]
		}
		cands = cands[:0]
		// Partial pricing: solve the bins whose cheap bound (their last
		// LP multipliers) is worst; the others keep the cheap bound. All
		// of them when those yield no column.
		for bi, b := range bins {
			us[bi], done[bi] = pr.cheap(bi, b, y), false
			work += len(b.groups) * D
			rank[bi] = bi
		}
		sort.SliceStable(rank, func(a, b int) bool {
			return us[rank[a]]/bins[rank[a]].price > us[rank[b]]/bins[rank[b]].price
		})
		for k, bi := range rank {
			if k >= cgPriceBins && len(cands) > 0 {
				break
			}
			b := bins[bi]
			if us[bi] <= b.price*(1+cgImprove) {
				break // and so are the rest
			}
			u, ks, exact, w := pr.price(bi, b, y, 0)
			work += w
			us[bi], done[bi] = min(us[bi], u), exact
			if ks != nil {
				addCand(bi, ks)
			}
		}
		// No improving column at the usual effort: spend the larger
		// budgets on the bins that set θ, worst first, until one yields
		// a column or the worst one cannot be tightened.
		for len(cands) == 0 && finals < cgFinalRounds {
			wi, wr, dr := -1, 0.0, 0.0
			for bi, b := range bins {
				r := us[bi] / b.price
				if done[bi] {
					dr = max(dr, r)
				} else if r > wr {
					wi, wr = bi, r
				}
			}
			if wi < 0 || wr <= dr || wr <= 1+cgImprove {
				finals++
				break
			}
			u, ks, _, w := pr.price(wi, bins[wi], y, 1)
			work += w
			us[wi], done[wi] = min(us[wi], u), true
			if ks != nil {
				addCand(wi, ks)
			}
		}
		theta := 0.0
		for bi, b := range bins {
			theta = max(theta, us[bi]/b.price)
		}
		if theta > 0 {
			lb := z / theta
			if lb > best*(1+cgStallRelative) {
				best, stall = lb, 0
			} else {
				best, stall = max(best, lb), stall+1
			}
			if lb > centerLB {
				for g := range center {
					center[g] = y[g] / theta
				}
				centerLB = lb
			}
		}
		// The master's primal value bounds the LP optimum, hence every
		// Farley bound, from above: stop when it is within reach.
		if master.Objective() <= max(best, shareLB)*(1+gap) {
			break
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].ratio > cands[j].ratio })
		added := 0
		for _, c := range cands {
			if added == max(cgColsPerRound, M/2) {
				break
			}
			if seen[colKey(c.bin, c.ks)] {
				continue
			}
			addCol(c.bin, c.ks)
			added++
		}
		if master.NumVars() > cgMaxCols {
			// Drop the generated columns priced worst under the
			// master's duals (they may come back).
			duals := master.Duals()
			type rc struct {
				j int
				d float64
			}
			var rcs []rc
			for j := 2 * M; j < master.NumVars(); j++ {
				if master.Basic(j) {
					continue
				}
				rcs = append(rcs, rc{j, master.ReducedCost(j, duals)})
			}
			sort.SliceStable(rcs, func(a, b int) bool { return rcs[a].d > rcs[b].d })
			drop := make([]bool, master.NumVars())
			for _, x := range rcs[:min(len(rcs), master.NumVars()-cgMaxCols*2/3)] {
				drop[x.j] = true
				delete(seen, colKeys[x.j])
			}
			newIdx := master.RemoveVars(drop)
			for j, nj := range newIdx {
				if nj >= 0 {
					colBin[nj], colKeys[nj] = colBin[j], colKeys[j]
				}
			}
			colBin, colKeys = colBin[:master.NumVars()], colKeys[:master.NumVars()]
		}
		if added == 0 {
			if pure || alpha == 0 {
				break
			}
			pure = true // nothing at the smoothed point: try the master's duals
			continue
		}
		pure = false
	}
	var sol []cgConfig
	if primal {
		x := make([]float64, master.NumVars())
		master.Values(x)
		for j, v := range x {
			if j >= len(colBin) || colBin[j] < 0 || v <= 1e-9 {
				continue
			}
			b := bins[colBin[j]]
			c := cgConfig{pool: b.pool, typ: b.typ, price: b.price, x: v, counts: make([]int64, G)}
			for k, r := range master.Col(j).Rows {
				c.counts[rowG[r]] = int64(math.Round(master.Col(j).Values[k]))
			}
			sol = append(sol, c)
		}
	}
	return best * (1 - cgSafety), sol
}
