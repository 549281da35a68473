package solver

import (
	"math"
	"sort"

	"github.com/joinery/joinery/solver/internal/lp"
)

// cgMaxFit is how many pods of group g one bin holds alone (at most n).
func cgMaxFit(capacity, req []int64, n int) int64 {
	k := int64(n)
	for d, q := range req {
		if q > 0 {
			k = min(k, capacity[d]/q)
		}
	}
	return max(k, 0)
}

// cgPricer solves the pricing problem of one bin under duals y: the
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
type cgPricer struct {
	G, D  int
	reqs  [][]int64 // per group, over the D dims
	sizes []int     // pods per group

	items []int32 // the bin's groups with y_g > 0 (indices into its cgBinLP items)
	// The items sorted by value per surrogate size: group, requests
	// (n×D), value, count bound, surrogate size.
	order []int32
	req   []int64
	val   []float64
	ub    []int64
	a     []float64
	wt    []float64 // surrogate weight per unit of each dim

	// branch and bound state
	rem     []int64
	cur     []int64
	bestK   []int64
	best    float64
	found   bool
	open    float64 // largest bound of a subtree the work limit left open
	limit   int     // work limit (ops)
	aborted bool

	dpf  []float64
	dpTk []uint64
	ops  int // branch and bound work (multiply-adds, roughly)

	binLPs []*cgBinLP
}

func newCGPricer(G, D int, reqs [][]int64, groups []*lbGroup) *cgPricer {
	pr := &cgPricer{G: G, D: D, reqs: reqs, wt: make([]float64, D)}
	for _, g := range groups {
		pr.sizes = append(pr.sizes, g.cap())
	}
	return pr
}

// cgBinLP is a bin's knapsack LP relaxation, kept across rounds: only
// the costs (−y) change, so each solve starts from the last basis.
type cgBinLP struct {
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
func (pr *cgPricer) lagrangian(bl *cgBinLP, b *cgBin, y []float64) float64 {
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
func (pr *cgPricer) cheap(bi int, b *cgBin, y []float64) float64 {
	return pr.lagrangian(pr.binLP(bi, b), b, y)
}

func (pr *cgPricer) binLP(bi int, b *cgBin) *cgBinLP {
	for len(pr.binLPs) <= bi {
		pr.binLPs = append(pr.binLPs, nil)
	}
	if bl := pr.binLPs[bi]; bl != nil {
		return bl
	}
	bl := &cgBinLP{items: b.groups}
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
		u := cgMaxFit(b.cap, pr.reqs[g], pr.sizes[g])
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
// (1+cgImprove)·price when it found one, whether the bound is as tight as
// this pricer gets it, and the work spent. mode selects the budgets (0
// usual, 1 final).
func (pr *cgPricer) price(bi int, b *cgBin, y []float64, mode int) (float64, []int64, bool, int) {
	D := pr.D
	bl := pr.binLP(bi, b)
	pr.items = pr.items[:0] // indices into bl.items
	for i, g := range bl.items {
		if y[g] > 0 {
			pr.items = append(pr.items, int32(i))
		}
	}
	n := len(pr.items)
	if n == 0 {
		return 0, nil, true, 0
	}
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
	work := bl.relaxation.Ops() - ops0 + n*len(rows)
	uLP := pr.lagrangian(bl, b, y)
	threshold := b.price * (1 + cgImprove)
	if uLP <= threshold {
		return uLP, nil, true, work
	}

	// Items by value per surrogate size (weights μ per unit of capacity,
	// plus a little of every dim so none is free).
	msum := 0.0
	for _, m := range mu {
		msum += m
	}
	clear(pr.wt)
	for ri, d := range rows {
		pr.wt[d] = (mu[ri] + 1e-3*msum/float64(len(rows)) + 1e-12) / float64(b.cap[d])
	}
	type it struct {
		idx   int32 // in bl.items
		a, ef float64
	}
	its := make([]it, n)
	for k, i := range pr.items {
		g := bl.items[i]
		a := 0.0
		for d := 0; d < D; d++ {
			a += pr.wt[d] * float64(pr.reqs[g][d])
		}
		its[k] = it{i, a, y[g] / a}
	}
	sort.SliceStable(its, func(i, j int) bool { return its[i].ef > its[j].ef })
	pr.order, pr.req, pr.val, pr.ub, pr.a = pr.order[:0], pr.req[:0], pr.val[:0], pr.ub[:0], pr.a[:0]
	for _, x := range its {
		g := bl.items[x.idx]
		pr.order = append(pr.order, g)
		pr.req = append(pr.req, pr.reqs[g]...)
		pr.val = append(pr.val, y[g])
		pr.ub = append(pr.ub, bl.ub[x.idx])
		pr.a = append(pr.a, x.a)
	}
	config := func(k []int64) []int64 {
		ks := make([]int64, pr.G)
		for i, g := range pr.order {
			ks[g] = k[i]
		}
		return ks
	}

	// Incumbent: the LP optimum rounded down, then filled greedily.
	k0 := make([]int64, n)
	v0 := 0.0
	{
		rem := append([]int64(nil), b.cap...)
		for pass := 0; pass < 2; pass++ {
			for i, x := range its {
				want := pr.ub[i] - k0[i]
				if pass == 0 {
					want = min(want, int64(math.Floor(bl.x[x.idx]+1e-9)))
				}
				req := pr.req[i*D : (i+1)*D]
				want = copiesFitting(req, rem, want)
				if want <= 0 {
					continue
				}
				k0[i] += want
				v0 += float64(want) * pr.val[i]
				for d, q := range req {
					rem[d] -= want * q
				}
			}
		}
	}
	if v0 > threshold {
		return uLP, config(k0), false, work
	}

	// Exact dynamic program when the capacity grid is small.
	if v, k, cells, ok := pr.dp(b.cap, cgDPCells[mode]); ok {
		work += cells
		u := min(uLP, v*(1+1e-12))
		if v > threshold {
			return u, config(k), true, work
		}
		return u, nil, true, work
	}

	// Branch and bound.
	pr.rem = append(pr.rem[:0], make([]int64, (n+1)*D)...)
	copy(pr.rem, b.cap)
	pr.cur = append(pr.cur[:0], make([]int64, n)...)
	pr.bestK = append(pr.bestK[:0], make([]int64, n)...)
	pr.best, pr.found, pr.open, pr.limit, pr.aborted, pr.ops = threshold, false, 0, cgBBWork[mode], false, 0
	pr.dfs(0, 0)
	work += pr.ops
	u := pr.best * (1 + cgPruneSlack)
	if pr.aborted {
		u = max(u, pr.open)
	}
	u = min(u, uLP)
	if !pr.found {
		return u, nil, !pr.aborted, work
	}
	return u, config(pr.bestK), !pr.aborted, work
}

// dp solves the knapsack of the sorted items exactly over the grid of
// capacity cap, in units of the gcd of each dim's requests, over the dims
// that can bind: the dim all items request that admits the fewest items
// (that count, m) and every dim the m largest requests would overflow.
// It declines (ok false) when the grid times the binary splitting of the
// counts exceeds limit cells, and checks its configuration against every
// dim before returning it.
func (pr *cgPricer) dp(capacity []int64, limit int) (float64, []int64, int, bool) {
	D, n := pr.D, len(pr.val)
	// The most items any configuration holds, by the dim all items
	// request that admits the fewest (kept: the others are judged by it).
	maxCount, countDim := int64(0), -1
	for i := range pr.ub {
		maxCount += pr.ub[i]
	}
	idx := make([]int, n)
	for d := 0; d < D; d++ {
		all := true
		for i := 0; i < n; i++ {
			all = all && pr.req[i*D+d] > 0
		}
		if !all {
			continue
		}
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(x, y int) bool { return pr.req[idx[x]*D+d] < pr.req[idx[y]*D+d] })
		left, cnt := capacity[d], int64(0)
		for _, i := range idx {
			q := pr.req[i*D+d]
			k := min(pr.ub[i], left/q)
			cnt += k
			left -= k * q
			if k < pr.ub[i] {
				break
			}
		}
		if cnt < maxCount {
			maxCount, countDim = cnt, d
		}
	}
	var dims []int
	var unit, capU []int64
	cells := 1
	for d := 0; d < D; d++ {
		if d != countDim {
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(x, y int) bool { return pr.req[idx[x]*D+d] > pr.req[idx[y]*D+d] })
			left, need := maxCount, int64(0)
			for _, i := range idx {
				k := min(left, pr.ub[i])
				need += k * pr.req[i*D+d]
				left -= k
				if left == 0 {
					break
				}
			}
			if need <= capacity[d] {
				continue // cannot bind
			}
		}
		g := int64(0)
		for i := 0; i < n; i++ {
			g = gcd64(g, pr.req[i*D+d])
		}
		if g <= 0 {
			continue
		}
		c := capacity[d] / g
		if c+1 > int64(limit) {
			return 0, nil, 0, false
		}
		cells *= int(c + 1)
		if cells > limit {
			return 0, nil, 0, false
		}
		dims = append(dims, d)
		unit = append(unit, g)
		capU = append(capU, c)
	}
	fits := func(k []int64) bool {
		for d := 0; d < D; d++ {
			use := int64(0)
			for i := 0; i < n; i++ {
				use += k[i] * pr.req[i*D+d]
			}
			if use > capacity[d] {
				return false
			}
		}
		return true
	}
	if len(dims) == 0 { // everything fits
		k := append([]int64(nil), pr.ub...)
		v := 0.0
		for i := range k {
			v += float64(k[i]) * pr.val[i]
		}
		if !fits(k) {
			return 0, nil, 0, false
		}
		return v, k, n, true
	}
	// Binary splitting of the counts into 0/1 chunks.
	type chunk struct {
		item int
		c    int64
		off  int
		w    []int64
	}
	var chunks []chunk
	stride := make([]int, len(dims))
	S := 1
	for j := range dims {
		stride[j] = S
		S *= int(capU[j] + 1)
	}
	for i := 0; i < n; i++ {
		left := pr.ub[i]
		for c := int64(1); left > 0; c *= 2 {
			c = min(c, left)
			left -= c
			ch := chunk{item: i, c: c, w: make([]int64, len(dims))}
			for j, d := range dims {
				ch.w[j] = c * pr.req[i*D+d] / unit[j]
				ch.off += int(ch.w[j]) * stride[j]
			}
			chunks = append(chunks, ch)
		}
	}
	if S*len(chunks) > limit {
		return 0, nil, 0, false
	}
	words := (S + 63) / 64
	pr.dpf = append(pr.dpf[:0], make([]float64, S)...)
	pr.dpTk = append(pr.dpTk[:0], make([]uint64, words*len(chunks))...)
	f := pr.dpf
	// Dim 0 varies fastest: per setting of the others (an odometer,
	// from the top), one tight loop over it.
	coord := make([]int64, len(dims))
	rows := S / int(capU[0]+1)
	for ci, ch := range chunks {
		v := float64(ch.c) * pr.val[ch.item]
		tk := pr.dpTk[ci*words : (ci+1)*words]
		copy(coord, capU)
		w0 := int(ch.w[0])
		for r := rows - 1; r >= 0; r-- {
			ok := true
			for j := 1; j < len(coord); j++ {
				ok = ok && coord[j] >= ch.w[j]
			}
			if ok {
				base := r * int(capU[0]+1)
				for c0 := int(capU[0]); c0 >= w0; c0-- {
					s := base + c0
					if x := f[s-ch.off] + v; x > f[s] {
						f[s] = x
						tk[s/64] |= 1 << (s % 64)
					}
				}
			}
			for j := 1; j < len(coord); j++ { // odometer over dims 1..
				if coord[j] > 0 {
					coord[j]--
					break
				}
				coord[j] = capU[j]
			}
		}
	}
	k := make([]int64, n)
	s := S - 1
	for ci := len(chunks) - 1; ci >= 0; ci-- {
		if pr.dpTk[ci*words+s/64]&(1<<(s%64)) != 0 {
			k[chunks[ci].item] += chunks[ci].c
			s -= chunks[ci].off
		}
	}
	// The configuration must fit every dim (the dropped ones cannot bind).
	if !fits(k) {
		return 0, nil, 0, false
	}
	return f[S-1], k, S * len(chunks), true
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// bound is an upper bound on the value items i.. can add within rem,
// with item i's count capped at first when first ≥ 0: the fractional
// knapsack on the surrogate constraint Σ wt·req ≤ Σ wt·rem, each item
// also capped by what fits rem alone.
func (pr *cgPricer) bound(i int, rem []int64, first int64) float64 {
	D := pr.D
	c := 0.0
	for d, w := range pr.wt {
		c += w * float64(rem[d])
	}
	tot := 0.0
	for j := i; j < len(pr.val); j++ {
		k := pr.ub[j]
		if j == i && first >= 0 {
			k = min(k, first)
		}
		k = copiesFitting(pr.req[j*D:(j+1)*D], rem, k)
		if k <= 0 {
			continue
		}
		if s := pr.a[j] * float64(k); s <= c {
			tot += pr.val[j] * float64(k)
			c -= s
		} else {
			tot += pr.val[j] * c / pr.a[j]
			break
		}
	}
	pr.ops += (len(pr.val) - i + 1) * D
	return tot
}

// dfs explores the counts of items i.. with value v so far (depth-first,
// larger counts first). When the node limit stops it, open gets the bound
// of every subtree left unexplored.
func (pr *cgPricer) dfs(i int, v float64) {
	D := pr.D
	if v > pr.best {
		pr.best, pr.found = v, true
		copy(pr.bestK, pr.cur)
	}
	n := len(pr.val)
	if i == n {
		return
	}
	rem := pr.rem[i*D : (i+1)*D]
	if pr.ops >= pr.limit {
		pr.aborted = true
		pr.open = max(pr.open, v+pr.bound(i, rem, -1))
		return
	}
	req := pr.req[i*D : (i+1)*D]
	kmax := pr.ub[i]
	for d, q := range req {
		if q > 0 {
			kmax = min(kmax, rem[d]/q)
		}
	}
	next := pr.rem[(i+1)*D : (i+2)*D]
	for k := kmax; k >= 0; k-- {
		for d := range next {
			next[d] = rem[d] - k*req[d]
		}
		v2 := v + float64(k)*pr.val[i]
		if v2+pr.bound(i+1, next, -1) <= pr.best*(1+cgPruneSlack) {
			continue
		}
		pr.cur[i] = k
		pr.dfs(i+1, v2)
		pr.cur[i] = 0
		if pr.aborted {
			if k > 0 {
				pr.open = max(pr.open, v+pr.bound(i, rem, k-1))
			}
			return
		}
	}
}

// copiesFitting is how many copies of an item of requests req, at most k,
// fit the remaining capacity rem (per dimension).
func copiesFitting(req, rem []int64, k int64) int64 {
	for d, q := range req {
		if q > 0 {
			k = min(k, rem[d]/q)
		}
	}
	return k
}
