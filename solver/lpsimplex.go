package solver

import "math"

// spCol is a sparse column: val[k] in row idx[k].
type spCol struct {
	idx []int32
	val []float64
}

const (
	lpLower int8 = iota // nonbasic at 0
	lpUpper             // nonbasic at its upper bound
	lpBasic
)

// boundedLP is a small revised simplex method, with an explicit basis
// inverse, for
//
//	minimize cᵀx subject to Ax = b, 0 ≤ x ≤ u (u may be +Inf),
//
// started from a primal feasible basis the caller names (setBasis). Columns
// may be added between solves; the basis stays feasible, so each solve
// continues from the last one. It is meant for the lower bound's LPs (tens
// to a few hundred rows): the bound never trusts its optimality, only
// uses its duals as a starting point that is checked independently.
type boundedLP struct {
	m     int
	b     []float64
	cols  []spCol
	cost  []float64
	up    []float64
	stat  []int8
	basis []int
	start []int     // the caller's basis, restored if the basis goes singular
	binv  []float64 // m×m, row-major
	xB    []float64
	y     []float64
	w     []float64
	since int // pivots since the last refactorization
	// ops counts the multiply-adds spent (roughly), for work budgets.
	ops int
}

func newBoundedLP(b []float64) *boundedLP {
	m := len(b)
	return &boundedLP{m: m, b: b, binv: make([]float64, m*m), xB: make([]float64, m), y: make([]float64, m), w: make([]float64, m)}
}

// addVar adds a variable (nonbasic at 0) and returns its index.
func (lp *boundedLP) addVar(c spCol, cost, up float64) int {
	lp.cols = append(lp.cols, c)
	lp.cost = append(lp.cost, cost)
	lp.up = append(lp.up, up)
	lp.stat = append(lp.stat, lpLower)
	return len(lp.cols) - 1
}

// setBasis makes vars (one per row) the basis; it reports false when
// their columns are singular.
func (lp *boundedLP) setBasis(vars []int) bool {
	lp.start = append([]int(nil), vars...)
	return lp.restart()
}

func (lp *boundedLP) restart() bool {
	for j := range lp.stat {
		lp.stat[j] = lpLower
	}
	lp.basis = append(lp.basis[:0], lp.start...)
	for _, j := range lp.basis {
		lp.stat[j] = lpBasic
	}
	return lp.refactor()
}

// refactor inverts the basis matrix (Gauss-Jordan, partial pivoting) and
// recomputes the basic values.
func (lp *boundedLP) refactor() bool {
	m := lp.m
	a := make([]float64, m*m) // B, column i = basis[i]
	for i, j := range lp.basis {
		c := lp.cols[j]
		for k, r := range c.idx {
			a[int(r)*m+i] = c.val[k]
		}
	}
	lp.ops += m * m * m
	inv := lp.binv
	clear(inv)
	for i := 0; i < m; i++ {
		inv[i*m+i] = 1
	}
	for c := 0; c < m; c++ {
		p, best := -1, 1e-11
		for r := c; r < m; r++ {
			if v := math.Abs(a[r*m+c]); v > best {
				p, best = r, v
			}
		}
		if p < 0 {
			return false
		}
		if p != c {
			for k := 0; k < m; k++ {
				a[p*m+k], a[c*m+k] = a[c*m+k], a[p*m+k]
				inv[p*m+k], inv[c*m+k] = inv[c*m+k], inv[p*m+k]
			}
		}
		d := 1 / a[c*m+c]
		for k := 0; k < m; k++ {
			a[c*m+k] *= d
			inv[c*m+k] *= d
		}
		for r := 0; r < m; r++ {
			if r == c {
				continue
			}
			f := a[r*m+c]
			if f == 0 {
				continue
			}
			for k := 0; k < m; k++ {
				a[r*m+k] -= f * a[c*m+k]
				inv[r*m+k] -= f * inv[c*m+k]
			}
		}
	}
	rhs := append([]float64(nil), lp.b...)
	for j, s := range lp.stat {
		if s == lpUpper {
			c := lp.cols[j]
			for k, r := range c.idx {
				rhs[r] -= lp.up[j] * c.val[k]
			}
		}
	}
	for i := 0; i < m; i++ {
		s := 0.0
		for k := 0; k < m; k++ {
			s += inv[i*m+k] * rhs[k]
		}
		lp.xB[i] = min(max(s, 0), lp.up[lp.basis[i]])
	}
	lp.since = 0
	return true
}

// duals returns y = c_Bᵀ B⁻¹ (owned by lp, overwritten by the next call).
func (lp *boundedLP) duals() []float64 {
	m := lp.m
	clear(lp.y)
	for i, j := range lp.basis {
		c := lp.cost[j]
		if c == 0 {
			continue
		}
		row := lp.binv[i*m : (i+1)*m]
		for k, v := range row {
			lp.y[k] += c * v
		}
	}
	return lp.y
}

// solve runs at most maxPivots pivots (Dantzig's rule); it reports false
// when the limit stopped it or the problem looked unbounded.
func (lp *boundedLP) solve(maxPivots int) bool {
	m := lp.m
	scale := 0.0
	for _, c := range lp.cost {
		scale = max(scale, math.Abs(c))
	}
	tol := 1e-10 * max(scale, 1e-9)
	for piv := 0; piv < maxPivots; piv++ {
		if lp.since >= 50 && !lp.refactor() && !lp.restart() {
			return false
		}
		y := lp.duals()
		lp.ops += m*m + len(lp.cols)
		q, qd := -1, 0.0
		for j, c := range lp.cols {
			s := lp.stat[j]
			if s == lpBasic {
				continue
			}
			d := lp.cost[j]
			for k, r := range c.idx {
				d -= y[r] * c.val[k]
			}
			lp.ops += len(c.idx)
			if (s == lpLower && d < -tol || s == lpUpper && d > tol) && math.Abs(d) > qd {
				q, qd = j, math.Abs(d)
			}
		}
		if q < 0 {
			return true
		}
		// w = B⁻¹ a_q
		w := lp.w
		clear(w)
		cq := lp.cols[q]
		for i := 0; i < m; i++ {
			s := 0.0
			row := lp.binv[i*m : (i+1)*m]
			for k, r := range cq.idx {
				s += row[r] * cq.val[k]
			}
			w[i] = s
		}
		sigma := 1.0 // x_q grows from 0
		if lp.stat[q] == lpUpper {
			sigma = -1
		}
		t, leave, toUpper, bestW := lp.up[q], -1, false, 0.0
		for i := 0; i < m; i++ {
			d := sigma * w[i] // x_B(i) moves by -t·d
			var r float64
			up := false
			switch {
			case d > 1e-9:
				r = lp.xB[i] / d
			case d < -1e-9 && !math.IsInf(lp.up[lp.basis[i]], 1):
				r, up = (lp.up[lp.basis[i]]-lp.xB[i])/-d, true
			default:
				continue
			}
			r = max(r, 0)
			if r < t-1e-12 || (r <= t+1e-12 && leave >= 0 && math.Abs(w[i]) > bestW) {
				t, leave, toUpper, bestW = r, i, up, math.Abs(w[i])
			}
		}
		if math.IsInf(t, 1) {
			return false
		}
		for i := 0; i < m; i++ {
			lp.xB[i] -= t * sigma * w[i]
		}
		if leave < 0 { // bound flip
			if sigma > 0 {
				lp.stat[q] = lpUpper
			} else {
				lp.stat[q] = lpLower
			}
			continue
		}
		out := lp.basis[leave]
		if toUpper {
			lp.stat[out] = lpUpper
		} else {
			lp.stat[out] = lpLower
		}
		if sigma > 0 {
			lp.xB[leave] = t
		} else {
			lp.xB[leave] = lp.up[q] - t
		}
		lp.basis[leave] = q
		lp.stat[q] = lpBasic
		pr := lp.binv[leave*m : (leave+1)*m]
		inv := 1 / w[leave]
		for k := range pr {
			pr[k] *= inv
		}
		for i := 0; i < m; i++ {
			if i == leave || w[i] == 0 {
				continue
			}
			f := w[i]
			row := lp.binv[i*m : (i+1)*m]
			for k, v := range pr {
				row[k] -= f * v
			}
		}
		for i := range lp.xB {
			lp.xB[i] = min(max(lp.xB[i], 0), lp.up[lp.basis[i]])
		}
		lp.since++
		lp.ops += 2 * m * m
	}
	return false
}

// removeVars drops the nonbasic variables marked in drop (none of the
// starting basis) and renumbers the rest in order; it returns the new
// index of each old one (-1 dropped).
func (lp *boundedLP) removeVars(drop []bool) []int {
	newIdx := make([]int, len(lp.cols))
	keep := make([]bool, len(lp.cols))
	for _, j := range lp.start {
		keep[j] = true
	}
	n := 0
	for j := range lp.cols {
		if drop[j] && lp.stat[j] != lpBasic && !keep[j] {
			newIdx[j] = -1
			continue
		}
		newIdx[j] = n
		lp.cols[n], lp.cost[n], lp.up[n], lp.stat[n] = lp.cols[j], lp.cost[j], lp.up[j], lp.stat[j]
		n++
	}
	lp.cols, lp.cost, lp.up, lp.stat = lp.cols[:n], lp.cost[:n], lp.up[:n], lp.stat[:n]
	for i, j := range lp.basis {
		lp.basis[i] = newIdx[j]
	}
	for i, j := range lp.start {
		lp.start[i] = newIdx[j]
	}
	return newIdx
}

// values writes the current primal solution into x (len = variables).
func (lp *boundedLP) values(x []float64) {
	for j, s := range lp.stat {
		x[j] = 0
		if s == lpUpper {
			x[j] = lp.up[j]
		}
	}
	for i, j := range lp.basis {
		x[j] = lp.xB[i]
	}
}

// objective is cᵀx at the current (primal feasible) solution.
func (lp *boundedLP) objective() float64 {
	z := 0.0
	for j, s := range lp.stat {
		if s == lpUpper {
			z += lp.cost[j] * lp.up[j]
		}
	}
	for i, j := range lp.basis {
		z += lp.cost[j] * lp.xB[i]
	}
	return z
}
