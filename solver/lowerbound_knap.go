package solver

import (
	"math"
	"sort"

	"github.com/joinery/joinery/solver/internal/knapsack"
	"github.com/joinery/joinery/solver/internal/lp"
)

// maxFitAlone is how many pods of group g one bin holds alone (at most n).
func maxFitAlone(capacity, req []int64, n int) int64 {
	k := int64(n)
	for d, q := range req {
		if q > 0 {
			k = min(k, capacity[d]/q)
		}
	}
	return max(k, 0)
}

// binPricer solves the pricing problem of one bin under duals y: the
// bounded multi-dimensional knapsack
//
//	max Σ_g k_g·y_g  s.t.  Σ_g k_g·req_g ≤ cap,  0 ≤ k_g ≤ n_g integer,
//
// returning an upper bound on its optimum (what Farley's bound needs) and
// an improving configuration when it finds one. The bound is the smallest
// of: the LP relaxation's dual bound (any μ ≥ 0 gives one, by weak
// duality), an exact dynamic program over the capacity grid when that grid
// is small, and branch and bound (incumbent, or the bounds of the subtrees
// a work limit left open).
type binPricer struct {
	G, D  int
	reqs  [][]int64 // per group, over the D dims
	sizes []int     // pods per group

	items []int32 // the bin's groups with y_g > 0 (indices into its binRelaxation items)
	// order is the group of each knapsack item: the items sorted by
	// value per surrogate size.
	order []int32
	knap  *knapsack.Knapsack

	binLPs []*binRelaxation
}

func newBinPricer(G, D int, reqs [][]int64, groups []*boundGroup) *binPricer {
	pr := &binPricer{G: G, D: D, reqs: reqs, knap: knapsack.New(D)}
	for _, g := range groups {
		pr.sizes = append(pr.sizes, g.cap())
	}
	return pr
}

// binRelaxation is a bin's knapsack LP relaxation, kept across rounds: only
// the costs (−y) change, so each solve starts from the last basis.
type binRelaxation struct {
	relaxation *lp.Bounded
	items      []int32 // the bin's groups
	ub         []int64 // most pods of each the bin holds alone
	rows       []int   // dims some group requests
	x          []float64
	ok         bool
	mu         []float64 // the duals of the last solve (nil before)
}

// lagrangian is the LP dual bound of bin b under y with the multipliers
// of its last LP solve: by weak duality, for any μ ≥ 0,
// Σ_r μ_r + Σ_g ub_g·(y_g − Σ_r μ_r·req_g,r/cap_r)⁺ is at least the LP
// optimum, whatever the simplex achieved. +Inf before the first solve.
func (pr *binPricer) lagrangian(bl *binRelaxation, b *configBin, y []float64) float64 {
	if bl.mu == nil {
		return math.Inf(1)
	}
	u := 0.0
	for _, m := range bl.mu {
		u += m
	}
	for i, g := range bl.items {
		v := y[g]
		if v <= 0 {
			continue
		}
		for ri, d := range bl.rows {
			v -= bl.mu[ri] * float64(pr.reqs[g][d]) / float64(b.cap[d])
		}
		if v > 0 {
			u += float64(bl.ub[i]) * v
		}
	}
	return u
}

// cheap is the bound lagrangian gives bin bi without solving its LP.
func (pr *binPricer) cheap(bi int, b *configBin, y []float64) float64 {
	return pr.lagrangian(pr.binLP(bi, b), b, y)
}

func (pr *binPricer) binLP(bi int, b *configBin) *binRelaxation {
	for len(pr.binLPs) <= bi {
		pr.binLPs = append(pr.binLPs, nil)
	}
	if bl := pr.binLPs[bi]; bl != nil {
		return bl
	}
	bl := &binRelaxation{items: b.groups}
	for d := 0; d < pr.D; d++ {
		for _, g := range b.groups {
			if pr.reqs[g][d] > 0 {
				bl.rows = append(bl.rows, d)
				break
			}
		}
	}
	one := make([]float64, len(bl.rows))
	for i := range one {
		one[i] = 1
	}
	bl.relaxation = lp.New(one)
	for _, g := range b.groups {
		u := maxFitAlone(b.cap, pr.reqs[g], pr.sizes[g])
		bl.ub = append(bl.ub, u)
		var c lp.Column
		for ri, d := range bl.rows {
			if q := pr.reqs[g][d]; q > 0 {
				c.Rows = append(c.Rows, int32(ri))
				c.Values = append(c.Values, float64(q)/float64(b.cap[d]))
			}
		}
		bl.relaxation.AddVar(c, 0, float64(u))
	}
	basis := make([]int, len(bl.rows))
	for ri := range bl.rows {
		basis[ri] = bl.relaxation.AddVar(lp.Column{Rows: []int32{int32(ri)}, Values: []float64{1}}, 0, math.Inf(1))
	}
	bl.ok = bl.relaxation.SetBasis(basis)
	bl.x = make([]float64, bl.relaxation.NumVars())
	pr.binLPs[bi] = bl
	return bl
}

// price prices bin bi (b): it returns an upper bound on the knapsack
// optimum, a configuration (pods per group) worth more than
// (1+cgImprove)·price (the bin's price plus what its node costs the
// limits' multipliers) when it found one, whether the bound is as tight as
// this pricer gets it, and the work spent. mode selects the budgets (0
// usual, 1 final). The stages, cheapest first, each returning when it
// settles the bin: the LP relaxation's dual bound, a greedy incumbent,
// the dynamic program, branch and bound.
func (pr *binPricer) price(bi int, b *configBin, y []float64, price float64, mode int) (float64, []int64, bool, int) {
	bl := pr.binLP(bi, b)
	pr.items = pr.items[:0] // indices into bl.items
	for i, g := range bl.items {
		if y[g] > 0 {
			pr.items = append(pr.items, int32(i))
		}
	}
	if len(pr.items) == 0 {
		return 0, nil, true, 0
	}
	mu, work := pr.relax(bl, y)
	uLP := pr.lagrangian(bl, b, y)
	threshold := price * (1 + cgImprove)
	if uLP <= threshold {
		return uLP, nil, true, work
	}
	its := pr.sortItems(bl, b, y, mu)
	if k0, v0 := pr.incumbent(bl, b, its); v0 > threshold {
		return uLP, pr.config(k0), false, work
	}
	if v, k, cells, ok := pr.knap.DP(b.cap, cgDPCells[mode]); ok {
		work += cells
		u := min(uLP, v*(1+1e-12))
		if v > threshold {
			return u, pr.config(k), true, work
		}
		return u, nil, true, work
	}
	u, k, complete, ops := pr.knap.BranchAndBound(b.cap, threshold, cgPruneSlack, cgBBWork[mode])
	work += ops
	u = min(u, uLP)
	if k == nil {
		return u, nil, complete, work
	}
	return u, pr.config(k), complete, work
}

// relax solves the bin's knapsack LP relaxation at costs −y from its last
// basis and keeps its multipliers μ (≥ 0, per row) for lagrangian; it
// returns them and the work spent.
func (pr *binPricer) relax(bl *binRelaxation, y []float64) ([]float64, int) {
	rows := bl.rows
	mu := make([]float64, len(rows))
	ops0 := bl.relaxation.Ops()
	if bl.ok {
		for i, g := range bl.items {
			bl.relaxation.SetCost(i, -y[g])
		}
		if bl.relaxation.Refactor() || bl.relaxation.Restart() {
			bl.relaxation.Solve(20 * (len(bl.items) + len(rows)))
			for ri, v := range bl.relaxation.Duals() {
				mu[ri] = max(-v, 0)
			}
			bl.relaxation.Values(bl.x)
		}
	}
	bl.mu = mu
	return mu, bl.relaxation.Ops() - ops0 + len(pr.items)*len(rows)
}

// pricedItem is one knapsack item: its index in the bin's items, its
// surrogate size and its value per surrogate size.
type pricedItem struct {
	idx   int32 // in binRelaxation.items
	a, ef float64
}

// sortItems loads the knapsack with pr.items by value per surrogate size
// (weights μ per unit of capacity, plus a little of every dim so none is
// free), best first, and returns them in that order.
func (pr *binPricer) sortItems(bl *binRelaxation, b *configBin, y, mu []float64) []pricedItem {
	D, rows, kn := pr.D, bl.rows, pr.knap
	msum := 0.0
	for _, m := range mu {
		msum += m
	}
	clear(kn.Weight)
	for ri, d := range rows {
		kn.Weight[d] = (mu[ri] + 1e-3*msum/float64(len(rows)) + 1e-12) / float64(b.cap[d])
	}
	its := make([]pricedItem, len(pr.items))
	for k, i := range pr.items {
		g := bl.items[i]
		a := 0.0
		for d := 0; d < D; d++ {
			a += kn.Weight[d] * float64(pr.reqs[g][d])
		}
		its[k] = pricedItem{i, a, y[g] / a}
	}
	sort.SliceStable(its, func(i, j int) bool { return its[i].ef > its[j].ef })
	pr.order = pr.order[:0]
	kn.Reset()
	for _, x := range its {
		g := bl.items[x.idx]
		pr.order = append(pr.order, g)
		kn.Add(pr.reqs[g], y[g], bl.ub[x.idx], x.a)
	}
	return its
}

// incumbent is the LP optimum rounded down, then filled greedily in item
// order, and its value.
func (pr *binPricer) incumbent(bl *binRelaxation, b *configBin, its []pricedItem) ([]int64, float64) {
	D, kn := pr.D, pr.knap
	k0 := make([]int64, len(its))
	v0 := 0.0
	rem := append([]int64(nil), b.cap...)
	for pass := 0; pass < 2; pass++ {
		for i, x := range its {
			want := kn.Count[i] - k0[i]
			if pass == 0 {
				want = min(want, int64(math.Floor(bl.x[x.idx]+1e-9)))
			}
			req := kn.Req[i*D : (i+1)*D]
			want = knapsack.CopiesFitting(req, rem, want)
			if want <= 0 {
				continue
			}
			k0[i] += want
			v0 += float64(want) * kn.Value[i]
			for d, q := range req {
				rem[d] -= want * q
			}
		}
	}
	return k0, v0
}

// config turns counts per knapsack item into pods per group.
func (pr *binPricer) config(k []int64) []int64 {
	ks := make([]int64, pr.G)
	for i, g := range pr.order {
		ks[g] = k[i]
	}
	return ks
}
