package solver

import (
	"math"

	"github.com/joinery/joinery/resources"
)

// LowerBound returns a lower bound, in USD/hour, on the price of the new
// nodes of ANY plan that places every pending pod this solver can place on
// new capacity (pods no instance type can hold, and pods that fit some
// existing node, contribute 0).
//
// Method: the LP dual of the fractional relaxation "buy fractional nodes of
// each type, assign pods fractionally, respect every resource of every
// node". For every instance type t choose weights λ_t over the resources
// (cpu, memory, pods, GPUs..., Σ_r λ_t,r = 1). A node of type t whose pods S
// fit its usable resources u(t) (allocatable minus daemonset overhead)
// satisfies Σ_{p∈S} Σ_r λ_t,r·req_r(p)/u_r(t) ≤ 1, so its price P(t) is at
// least Σ_{p∈S} y_p for any
//
//	y_p ≤ min_{t ∈ T(p)} P(t, p) · Σ_r λ_t,r · req_r(p) / u_r(t)
//
// where T(p) are the types (in any NodePool whose taints the pod tolerates
// and whose requirements its most relaxed node affinity meets) that fit p,
// and P(t, p) the cheapest available offering of t compatible with p (a
// node's offering is compatible with all its pods, so it costs at least
// each P(t, p)). Hence Σ_p y_p bounds every plan. λ starts as the best
// single weight vector on a 0.05 grid over (cpu, memory, GPU) and is then
// improved per type, over plain and rounded shares (dffRounding), by
// exponentiated-gradient ascent on a soft-min
// relaxation (at most 150 steps); every iterate is a valid bound and the best is
// returned. NodePool limits, topology and host ports are
// relaxed away (the bound stays valid, it only gets weaker).
func LowerBound(in Input) float64 {
	p := prepare(in)
	groups := lbGroups(p)
	if len(groups) == 0 {
		return 0
	}
	// The coordinates of λ: per resource any group requests, the plain
	// share and its rounded shares (dffRounding).
	var dims []lbDim
	for r := 0; r < resources.Count; r++ {
		for _, g := range groups {
			if g.req[r] > 0 {
				for _, k := range dffKs {
					dims = append(dims, lbDim{r, k})
				}
				break
			}
		}
	}
	// Candidates: per group, per compatible (pool, type), the vector
	// w_r = P(t, g)·req_r(g)/u_r(t). Types are numbered across pools.
	type cand struct {
		typ int
		w   []float64
	}
	cands := make([][]cand, len(groups))
	var byType [][]int32 // groups with a candidate on each type
	typeID := 0
	for _, pl := range p.pools {
		for t := range pl.types {
			id := typeID
			typeID++
			byType = append(byType, nil)
			for gi, g := range groups {
				sp := g.sig.forPool(pl)
				if sp.taint != nil {
					continue
				}
				var m uint64
				for _, c := range sp.terms {
					m |= c.masks[t]
				}
				if m == 0 || !g.req.Fits(pl.usable[t]) {
					continue
				}
				price := pl.types[t].cheapest(m)
				w := make([]float64, len(dims))
				for d, dm := range dims {
					if g.req[dm.r] > 0 {
						w[d] = price * dffRounding(dm.k, g.req[dm.r], pl.usable[t][dm.r])
					}
				}
				cands[gi] = append(cands[gi], cand{typ: id, w: w})
				byType[id] = append(byType[id], int32(gi))
			}
		}
	}
	lambda := make([][]float64, typeID)
	start := bestUniformLambda(dims, groups, func(gi int, l []float64) float64 {
		lo := math.Inf(1)
		for _, c := range cands[gi] {
			lo = min(lo, dot(l, c.w))
		}
		return lo
	})
	for t := range lambda {
		lambda[t] = start
	}
	// Exponentiated-gradient ascent on a soft-min relaxation: soft-min
	// is below min, so every λ it visits gives a valid bound, evaluated
	// exactly; the best one is kept.
	exact := func() float64 {
		s := 0.0
		for gi, g := range groups {
			lo := math.Inf(1)
			for _, c := range cands[gi] {
				lo = min(lo, dot(lambda[c.typ], c.w))
			}
			if !math.IsInf(lo, 1) {
				s += lo * float64(g.n)
			}
		}
		return s
	}
	bestV := exact()
	for t := range lambda {
		// Leave the grid's zeros room to grow: multiplicative updates
		// cannot revive a zero weight.
		l := make([]float64, len(dims))
		for d := range l {
			l[d] = 0.9*start[d] + 0.1/float64(len(dims))
		}
		lambda[t] = l
	}
	grad := make([][]float64, len(lambda))
	for t := range grad {
		grad[t] = make([]float64, len(dims))
	}
	vals := []float64{}
	const iters = 150
	for it, stale := 0, 0; it < iters && stale < 25; it++ {
		beta := 20 + 480*float64(it)/iters // soft-min sharpness, relative to the group's minimum
		for t := range grad {
			clear(grad[t])
		}
		for gi, g := range groups {
			if len(cands[gi]) == 0 {
				continue
			}
			vals = vals[:0]
			lo := math.Inf(1)
			for _, c := range cands[gi] {
				v := dot(lambda[c.typ], c.w)
				vals = append(vals, v)
				lo = min(lo, v)
			}
			if lo <= 0 {
				continue
			}
			sum := 0.0
			for k, v := range vals {
				vals[k] = math.Exp(-beta * (v - lo) / lo)
				sum += vals[k]
			}
			for k, c := range cands[gi] {
				wt := float64(g.n) * vals[k] / sum
				if wt < 1e-12 {
					continue
				}
				for d, x := range c.w {
					grad[c.typ][d] += wt * x
				}
			}
		}
		for t, gr := range grad {
			top := 0.0
			for _, x := range gr {
				top = max(top, x)
			}
			if top == 0 {
				continue
			}
			sum := 0.0
			for d, x := range gr {
				lambda[t][d] *= math.Exp(0.3 * x / top)
				sum += lambda[t][d]
			}
			for d := range lambda[t] {
				lambda[t][d] /= sum
			}
		}
		if v := exact(); v > bestV*(1+1e-5) {
			bestV, stale = v, 0
		} else {
			bestV, stale = max(bestV, v), stale+1
		}
	}
	return bestV
}

// lbDim is one coordinate of λ: resource r, rounded with dffRounding(k).
type lbDim struct{ r, k int }

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

type lbGroup struct {
	req resources.List
	sig *sigInfo
	n   int
}

type groupKey struct {
	req resources.List
	sig *sigInfo
}

// lbGroups groups the pods that need new capacity by (requests, most
// relaxed constraint signature), in first-seen order.
func lbGroups(p *prepared) []*lbGroup {
	var groups []*lbGroup
	idx := map[groupKey]*lbGroup{}
	for _, pi := range p.pods {
		if len(pi.pod.UnknownResources) > 0 {
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
			continue
		}
		g := &lbGroup{req: pi.req, sig: last, n: 1}
		idx[k] = g
		groups = append(groups, g)
	}
	return groups
}

// bestUniformLambda returns the weight vector (one for every type) on a
// 0.05 grid over cpu, memory and nvidia.com/gpu that maximizes the bound;
// groupMin(g, λ) is group g's per-pod bound under λ.
func bestUniformLambda(dims []lbDim, groups []*lbGroup, groupMin func(int, []float64) float64) []float64 {
	var active uint32
	for d, dm := range dims {
		if dm.k == 0 && (dm.r == resources.CPU || dm.r == resources.Memory || dm.r == resources.NvidiaGPU) {
			active |= 1 << d
		}
	}
	var bestL []float64
	bestV := -1.0
	for _, l := range simplexGrid(len(dims), active) {
		s := 0.0
		for gi, g := range groups {
			if v := groupMin(gi, l); !math.IsInf(v, 1) {
				s += v * float64(g.n)
			}
		}
		if s > bestV {
			bestL, bestV = l, s
		}
	}
	return bestL
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

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
