package solver

import (
	"cmp"
	"math"
	"slices"

	"github.com/joinery/joinery/solver/resources"
)

// LowerBound returns a lower bound, in USD/hour, on the price of the new
// nodes of any plan that places every pending pod this solver can place on
// new capacity (pods no instance type can hold, and pods that fit some
// existing node, contribute 0): the larger of the configuration-LP bound
// (configLPBound) and the weighted-share bound (shareBound), each valid on
// its own; the package documentation states both.
func LowerBound(in Input) float64 {
	p := prepare(in)
	groups := boundGroups(p)
	if len(groups) == 0 {
		return 0
	}
	share, y := shareBound(p, groups)
	return max(share, configLPBound(p, groups, y))
}

// shareBound is the weighted-share bound and its value per pod of each
// group (0 for groups no type holds).
func shareBound(p *prepared, groups []*boundGroup) (float64, []float64) {
	return shareBoundSteps(p, groups, shareSteps)
}

// shareSteps is how many exponentiated-gradient steps shareBound takes.
const shareSteps = 150

// shareBoundSteps is shareBound with at most iters ascent steps (0: the
// best uniform λ of the grid only): λ starts at the best uniform vector of
// the grid, then exponentiated-gradient ascent on a soft-min relaxation
// improves it per type. Soft-min is below min, so every λ it visits gives
// a valid bound, evaluated exactly; the best one is kept.
func shareBoundSteps(p *prepared, groups []*boundGroup, iters int) (float64, []float64) {
	return newShareSetup(p, groups).ascend(p, iters)
}

// shareSetup is what every ascent over the same groups starts from: λ's
// coordinates, each group's candidates (flattened) and the uniform start.
type shareSetup struct {
	groups []*boundGroup
	dims   []shareDim
	rows   *shareRows
	types  int
	start  []float64
}

func newShareSetup(p *prepared, groups []*boundGroup) *shareSetup {
	ss := &shareSetup{groups: groups, dims: shareDims(groups)}
	cands, types := shareCandidates(p, groups, ss.dims)
	ss.types, ss.start, ss.rows = types, uniformStart(ss.dims, groups, cands, p.expired), newShareRows(cands)
	return ss
}

// uniformStart is bestUniformLambda over the groups' candidates: the
// grid's weights are zero outside cpu, memory and GPUs, so a candidate
// dominated on those coordinates is never a group's minimum there and is
// left out of the grid search (the same minimum, a fraction of the work).
func uniformStart(dims []shareDim, groups []*boundGroup, cands [][]shareCandidate, stop func() bool) []float64 {
	active := uniformDims(dims)
	front := make([][]shareCandidate, len(cands))
	for gi, cs := range cands {
		front[gi] = paretoFront(cs, active)
	}
	return bestUniformLambda(dims, groups, stop, func(gi int, l []float64, on []int) float64 {
		lo := math.Inf(1)
		for _, c := range front[gi] {
			v := 0.0
			for _, d := range on {
				v += l[d] * c.w[d]
			}
			lo = min(lo, v)
		}
		return lo
	})
}

// paretoFront is cs without the candidates that another one dominates
// (no larger on every coordinate of dims; of equal ones the first stays).
func paretoFront(cs []shareCandidate, dims []int) []shareCandidate {
	sorted := slices.Clone(cs)
	slices.SortStableFunc(sorted, func(a, b shareCandidate) int {
		for _, d := range dims {
			if c := cmp.Compare(a.w[d], b.w[d]); c != 0 {
				return c
			}
		}
		return 0
	})
	var front []shareCandidate
	for _, c := range sorted {
		if !slices.ContainsFunc(front, func(f shareCandidate) bool { return dominates(f.w, c.w, dims) }) {
			front = append(front, c)
		}
	}
	return front
}

// dominates: a is no larger than b on every coordinate of dims.
func dominates(a, b []float64, dims []int) bool {
	for _, d := range dims {
		if a[d] > b[d] {
			return false
		}
	}
	return true
}

// ascend runs the ascent from the uniform start for at most iters
// steps and returns the best bound it evaluated and its value per pod of
// each group.
func (ss *shareSetup) ascend(p *prepared, iters int) (float64, []float64) {
	groups, D, start := ss.groups, len(ss.dims), ss.start
	a := &shareAscent{groups: groups, rows: ss.rows, D: D, lambda: make([]float64, ss.types*D), perPod: make([]float64, len(groups))}
	for t := 0; t < len(a.lambda); t += D {
		copy(a.lambda[t:], start)
	}
	bestY := make([]float64, len(groups))
	bestV := a.exact()
	copy(bestY, a.perPod)
	for t := 0; t < len(a.lambda); t += D {
		// Leave the grid's zeros room to grow: multiplicative updates
		// cannot revive a zero weight.
		for d := range D {
			a.lambda[t+d] = 0.9*start[d] + 0.1/float64(D)
		}
	}
	a.fresh = false
	a.grad = make([]float64, len(a.lambda))
	for it, stale := 0, 0; it < iters && stale < 25 && !p.expired(); it++ {
		beta := 20 + 480*float64(it)/float64(iters) // soft-min sharpness, relative to the group's minimum
		a.softMinGradient(beta)
		a.step()
		v := a.exact()
		if v > bestV {
			copy(bestY, a.perPod)
		}
		if v > bestV*(1+1e-5) {
			bestV, stale = v, 0
		} else {
			bestV, stale = max(bestV, v), stale+1
		}
	}
	return bestV, bestY
}

// shareDims are the coordinates of λ: per resource any group requests,
// the plain share and its rounded shares (dffRounding).
func shareDims(groups []*boundGroup) []shareDim {
	var dims []shareDim
	for r := 0; r < resources.Count; r++ {
		for _, g := range groups {
			if g.req[r] > 0 {
				for _, k := range dffKs {
					dims = append(dims, shareDim{r, k})
				}
				break
			}
		}
	}
	return dims
}

// shareCandidate is a type a group can use and the group's cost vector on
// it, w_d = P(t, g)·share_d(g, t).
type shareCandidate struct {
	typ int
	w   []float64
}

// shareCandidates are, per group, its candidates on every compatible
// (pool, type); types are numbered across pools (types of them).
func shareCandidates(p *prepared, groups []*boundGroup, dims []shareDim) (cands [][]shareCandidate, types int) {
	cands = make([][]shareCandidate, len(groups))
	for _, pl := range p.pools {
		for t := range pl.types {
			id := types
			types++
			for gi, g := range groups {
				price, ok := g.priceOn(pl, t)
				if !ok {
					continue
				}
				c := shareCandidate{typ: id, w: make([]float64, len(dims))}
				for d, dm := range dims {
					if g.req[dm.r] > 0 {
						c.w[d] = price * dffRounding(dm.k, g.req[dm.r], pl.usable[t][dm.r])
					}
				}
				cands[gi] = append(cands[gi], c)
			}
		}
	}
	return cands, types
}

// shareAscent is the state of the exponentiated-gradient ascent: λ per
// type (row t of lambda, D wide), the soft-min gradient in the same
// layout, and the value per pod of each group at the last exact
// evaluation.
type shareAscent struct {
	groups []*boundGroup
	rows   *shareRows
	D      int
	lambda []float64
	grad   []float64
	perPod []float64
	vals   []float64 // scratch
	// dots are λ·w of every candidate, at the last exact evaluation;
	// fresh while λ has not moved since.
	dots  []float64
	fresh bool
}

// shareRows are the groups' candidates, flattened for the ascent: the
// candidates of group g are first[g]..first[g+1]; candidate c is on type
// typ[c], its nonzero cost coordinates dim[k] and values w[k] for k in
// start[c]..start[c+1]. Contiguous and sparse (the rounded shares of
// small pods are mostly 0), each step reads them in order.
type shareRows struct {
	first, typ, start []int32
	dim               []uint8
	w                 []float64
}

func newShareRows(cands [][]shareCandidate) *shareRows {
	r := &shareRows{first: []int32{0}, start: []int32{0}}
	for _, cs := range cands {
		for _, c := range cs {
			r.typ = append(r.typ, int32(c.typ))
			for d, x := range c.w {
				if x != 0 {
					r.dim, r.w = append(r.dim, uint8(d)), append(r.w, x)
				}
			}
			r.start = append(r.start, int32(len(r.w)))
		}
		r.first = append(r.first, int32(len(r.typ)))
	}
	return r
}

// dot is λ·w of candidate c, over its nonzero coordinates only: the same
// sum as over all of them (λ is finite, so the others add +0).
func (a *shareAscent) dot(c int) float64 {
	r := a.rows
	l := a.lambda[int(r.typ[c])*a.D:]
	s := 0.0
	for k := r.start[c]; k < r.start[c+1]; k++ {
		s += l[r.dim[k]] * r.w[k]
	}
	return s
}

// exact is the bound at λ, Σ_g n_g·min over g's candidates of λ·w; it
// sets perPod, and dots for softMinGradient at the same λ.
func (a *shareAscent) exact() float64 {
	s, r := 0.0, a.rows
	a.dots = a.dots[:0]
	for gi, g := range a.groups {
		lo := math.Inf(1)
		for c := r.first[gi]; c < r.first[gi+1]; c++ {
			v := a.dot(int(c))
			a.dots = append(a.dots, v)
			lo = min(lo, v)
		}
		a.perPod[gi] = 0
		if !math.IsInf(lo, 1) {
			s += lo * float64(g.n)
			a.perPod[gi] = lo
		}
	}
	a.fresh = true
	return s
}

// softMinGradient sets grad to the gradient in λ of the soft-min
// relaxation with sharpness beta.
func (a *shareAscent) softMinGradient(beta float64) {
	clear(a.grad)
	r := a.rows
	for gi, g := range a.groups {
		c0, c1 := r.first[gi], r.first[gi+1]
		if c0 == c1 {
			continue
		}
		a.vals = a.vals[:0]
		lo := math.Inf(1)
		for c := c0; c < c1; c++ {
			v := 0.0
			if a.fresh {
				v = a.dots[c]
			} else {
				v = a.dot(int(c))
			}
			a.vals = append(a.vals, v)
			lo = min(lo, v)
		}
		if lo <= 0 {
			continue
		}
		sum := 0.0
		for k, v := range a.vals {
			// exp(x) is exactly 0 below about -745.13: skip the call.
			if x := -beta * (v - lo) / lo; x > -750 {
				a.vals[k] = math.Exp(x)
			} else {
				a.vals[k] = 0
			}
			sum += a.vals[k]
		}
		for k, v := range a.vals {
			wt := float64(g.n) * v / sum
			if wt < 1e-12 {
				continue
			}
			c := c0 + int32(k)
			gr := a.grad[int(r.typ[c])*a.D:]
			for e := r.start[c]; e < r.start[c+1]; e++ {
				gr[r.dim[e]] += wt * r.w[e]
			}
		}
	}
}

// step multiplies each type's λ by exp(0.3·grad/max grad) and
// renormalises it to sum 1.
func (a *shareAscent) step() {
	a.fresh = false
	for t := 0; t < len(a.lambda); t += a.D {
		gr, l := a.grad[t:t+a.D], a.lambda[t:t+a.D]
		top := 0.0
		for _, x := range gr {
			top = max(top, x)
		}
		if top == 0 {
			continue
		}
		sum := 0.0
		for d, x := range gr {
			l[d] *= math.Exp(0.3 * x / top)
			sum += l[d]
		}
		for d := range l {
			l[d] /= sum
		}
	}
}

// shareDim is one coordinate of λ: resource r, rounded with dffRounding(k).
type shareDim struct{ r, k int }

// dffKs are the roundings used: 0 is the plain share.
var dffKs = []int{0, 1, 2, 3, 5}

// dffRounding is a dual feasible function applied to the share x = a/u of
// one resource: for k = 0 x itself, else x when (k+1)·x is an integer and
// ⌊(k+1)·x⌋/k otherwise (Fekete and Schepers, "New classes of fast lower
// bounds for bin packing problems", Math. Programming 91, 2001). Shares
// that fit one node (Σ x ≤ 1) keep Σ f(x) ≤ 1, so the weighted-share
// argument of LowerBound holds for rounded shares too: a node of 0.9 GiB
// free holds one pod of 0.5 GiB, not 1.8.
func dffRounding(k int, a, u int64) float64 {
	if k == 0 {
		return float64(a) / float64(u)
	}
	n := int64(k+1) * a
	if n%u == 0 {
		return float64(a) / float64(u)
	}
	return float64(n/u) / float64(k)
}

type boundGroup struct {
	req  resources.List
	sig  *podSignature
	n    int
	pods []*podInfo // its pods, in packing order (len n)
	// perNode is the most pods of the group one new node may hold: 1 under
	// a required hostname anti-affinity the pods match themselves, maxSkew
	// under a hostname spread that counts them (a new node starts at 0 and
	// the minimum over nodes is 0), else n.
	perNode int
}

// cap is the most pods of the group one node holds (n, or perNode).
func (g *boundGroup) cap() int { return min(g.n, g.perNode) }

// hostCap is perNode for pods with signature sig (n when unconstrained).
func hostCap(sig *podSignature, n int) int {
	for _, c := range sig.cons {
		if c.ctr.key != domHost || !c.self || c.pref {
			continue
		}
		switch c.kind {
		case topoAnti:
			n = min(n, 1)
		case topoSpread:
			n = min(n, int(max(c.maxSkew, 1)))
		}
	}
	return n
}

// priceOn reports whether the group's pods may run on type t of pool pl
// (taints tolerated, most relaxed affinity met, requests fit the usable
// resources) and the USD/hour of the cheapest offering compatible with them.
func (g *boundGroup) priceOn(pl *poolInfo, t int) (float64, bool) {
	sp := g.sig.forPool(pl)
	if sp.taint != nil {
		return 0, false
	}
	var m uint64
	for _, c := range sp.terms {
		m |= c.masks[t]
	}
	if m == 0 || !g.req.Fits(pl.usable[t]) {
		return 0, false
	}
	return pl.types[t].cheapest(m), true
}

type groupKey struct {
	req resources.List
	sig *podSignature
}

// boundGroups groups the pods that need new capacity by (requests, most
// relaxed constraint signature), in first-seen order.
func boundGroups(p *prepared) []*boundGroup {
	var groups []*boundGroup
	idx := map[groupKey]*boundGroup{}
	for _, pi := range p.pods {
		if pi.pod.refused() {
			continue
		}
		onNode := false
		last := pi.levels[len(pi.levels)-1]
		for i, n := range p.nodes {
			if pi.req.Fits(n.Available) && last.fitsNode(i, n) {
				onNode = true
				break
			}
		}
		if onNode {
			continue
		}
		k := groupKey{pi.req, last}
		if g, ok := idx[k]; ok {
			g.n++
			g.pods = append(g.pods, pi)
			continue
		}
		g := &boundGroup{req: pi.req, sig: last, n: 1, pods: []*podInfo{pi}, perNode: hostCap(last, len(p.pods))}
		idx[k] = g
		groups = append(groups, g)
	}
	return groups
}

// bestUniformLambda returns the weight vector (one for every type) on a
// 0.05 grid over cpu, memory and nvidia.com/gpu that maximizes the bound;
// groupMin(g, λ, on) is group g's per-pod bound under λ, whose nonzero
// coordinates are in on; stop ends the search early.
func bestUniformLambda(dims []shareDim, groups []*boundGroup, stop func() bool, groupMin func(int, []float64, []int) float64) []float64 {
	var active uint32
	for _, d := range uniformDims(dims) {
		active |= 1 << d
	}
	var bestL []float64
	bestV := -1.0
	var on []int
	for i, l := range simplexGrid(len(dims), active) {
		if i > 0 && stop() {
			break // past Solve's deadline: the best so far
		}
		on = on[:0]
		for d, x := range l {
			if x != 0 {
				on = append(on, d)
			}
		}
		s := 0.0
		for gi, g := range groups {
			if v := groupMin(gi, l, on); !math.IsInf(v, 1) {
				s += v * float64(g.n)
			}
		}
		if s > bestV {
			bestL, bestV = l, s
		}
	}
	return bestL
}

// uniformDims are the coordinates bestUniformLambda's grid weighs: the
// plain shares of cpu, memory and nvidia.com/gpu.
func uniformDims(dims []shareDim) []int {
	var on []int
	for d, dm := range dims {
		if dm.k == 0 && (dm.r == resources.CPU || dm.r == resources.Memory || dm.r == resources.NvidiaGPU) {
			on = append(on, d)
		}
	}
	return on
}

// simplexGrid lists the weight vectors of length n, zero outside the bits
// of active, summing to 1, on a grid fine enough to stay small (step 1/20
// for up to 3 active coordinates, 1/10 for 4, 1/5 beyond).
func simplexGrid(n int, active uint32) [][]float64 {
	var on []int
	for d := 0; d < n; d++ {
		if active&(1<<d) != 0 {
			on = append(on, d)
		}
	}
	if len(on) == 0 {
		return [][]float64{make([]float64, n)}
	}
	steps := 20
	switch {
	case len(on) == 4:
		steps = 10
	case len(on) > 4:
		steps = 5
	}
	var out [][]float64
	parts := make([]int, len(on))
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(on)-1 {
			parts[i] = left
			l := make([]float64, n)
			for k, d := range on {
				l[d] = float64(parts[k]) / float64(steps)
			}
			out = append(out, l)
			return
		}
		for v := left; v >= 0; v-- {
			parts[i] = v
			rec(i+1, left-v)
		}
	}
	rec(0, steps)
	return out
}
