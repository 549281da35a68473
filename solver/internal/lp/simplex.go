// Package lp is a small dense revised simplex method for linear programs
// with bounded variables, the workhorse of the solver's lower bound.
package lp

import "math"

// Column is a sparse column: Values[k] in row Rows[k].
type Column struct {
	Rows   []int32
	Values []float64
}

// Variable states.
const (
	atLower int8 = iota // nonbasic at 0
	atUpper             // nonbasic at its upper bound
	basic
)

// Bounded is a revised simplex method, with an explicit basis inverse, for
//
//	minimize cᵀx subject to Ax = b, 0 ≤ x ≤ u (u may be +Inf),
//
// started from a primal feasible basis the caller names (SetBasis). Columns
// may be added between solves; the basis stays feasible, so each solve
// continues from the last one. It is meant for the lower bound's LPs (tens
// to a few hundred rows): the bound never trusts its optimality, only
// uses its duals as a starting point that is checked independently.
type Bounded struct {
	m     int
	b     []float64
	cols  []Column
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

// New returns the LP with right-hand side b (one row per entry) and no
// variables.
func New(b []float64) *Bounded {
	m := len(b)
	return &Bounded{m: m, b: b, binv: make([]float64, m*m), xB: make([]float64, m), y: make([]float64, m), w: make([]float64, m)}
}

// AddVar adds a variable (nonbasic at 0) and returns its index.
func (lp *Bounded) AddVar(c Column, cost, up float64) int {
	lp.cols = append(lp.cols, c)
	lp.cost = append(lp.cost, cost)
	lp.up = append(lp.up, up)
	lp.stat = append(lp.stat, atLower)
	return len(lp.cols) - 1
}

// SetBasis makes vars (one per row) the basis; it reports false when
// their columns are singular.
func (lp *Bounded) SetBasis(vars []int) bool {
	lp.start = append([]int(nil), vars...)
	return lp.Restart()
}

// Restart returns to the caller's basis (SetBasis) and refactors; it
// reports false when that basis is singular.
func (lp *Bounded) Restart() bool {
	for j := range lp.stat {
		lp.stat[j] = atLower
	}
	lp.basis = append(lp.basis[:0], lp.start...)
	for _, j := range lp.basis {
		lp.stat[j] = basic
	}
	return lp.Refactor()
}

// Refactor inverts the basis matrix (Gauss-Jordan, partial pivoting) and
// recomputes the basic values.
func (lp *Bounded) Refactor() bool {
	m := lp.m
	a := make([]float64, m*m) // B, column i = basis[i]
	for i, j := range lp.basis {
		c := lp.cols[j]
		for k, r := range c.Rows {
			a[int(r)*m+i] = c.Values[k]
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
		if s == atUpper {
			c := lp.cols[j]
			for k, r := range c.Rows {
				rhs[r] -= lp.up[j] * c.Values[k]
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

// Duals returns y = c_Bᵀ B⁻¹ (owned by lp, overwritten by the next call).
func (lp *Bounded) Duals() []float64 {
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

// Solve runs at most maxPivots pivots (Dantzig's rule); it reports false
// when the limit stopped it or the problem looked unbounded.
func (lp *Bounded) Solve(maxPivots int) bool {
	scale := 0.0
	for _, c := range lp.cost {
		scale = max(scale, math.Abs(c))
	}
	tol := 1e-10 * max(scale, 1e-9)
	for piv := 0; piv < maxPivots; piv++ {
		if lp.since >= 50 && !lp.Refactor() && !lp.Restart() {
			return false
		}
		q := lp.entering(lp.Duals(), tol)
		if q < 0 {
			return true
		}
		w := lp.direction(q)
		sigma := 1.0 // x_q grows from 0
		if lp.stat[q] == atUpper {
			sigma = -1
		}
		t, leave, toUpper := lp.ratioTest(q, w, sigma)
		if math.IsInf(t, 1) {
			return false
		}
		lp.pivot(q, w, sigma, t, leave, toUpper)
	}
	return false
}

// entering is the nonbasic variable whose reduced cost under y improves
// the objective most (by more than tol), -1 when none does.
func (lp *Bounded) entering(y []float64, tol float64) int {
	m := lp.m
	lp.ops += m*m + len(lp.cols)
	q, qd := -1, 0.0
	for j, c := range lp.cols {
		s := lp.stat[j]
		if s == basic {
			continue
		}
		d := lp.cost[j]
		for k, r := range c.Rows {
			d -= y[r] * c.Values[k]
		}
		lp.ops += len(c.Rows)
		if (s == atLower && d < -tol || s == atUpper && d > tol) && math.Abs(d) > qd {
			q, qd = j, math.Abs(d)
		}
	}
	return q
}

// direction is w = B⁻¹ a_q (owned by lp).
func (lp *Bounded) direction(q int) []float64 {
	m := lp.m
	w := lp.w
	clear(w)
	cq := lp.cols[q]
	for i := 0; i < m; i++ {
		s := 0.0
		row := lp.binv[i*m : (i+1)*m]
		for k, r := range cq.Rows {
			s += row[r] * cq.Values[k]
		}
		w[i] = s
	}
	return w
}

// ratioTest is the step t variable q can move in direction sigma before a
// basic variable (leave, -1 for q's own bound) reaches a bound (its upper
// one when toUpper); t is +Inf when nothing stops it.
func (lp *Bounded) ratioTest(q int, w []float64, sigma float64) (t float64, leave int, toUpper bool) {
	t, leave, toUpper, bestW := lp.up[q], -1, false, 0.0
	for i := 0; i < lp.m; i++ {
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
	return t, leave, toUpper
}

// pivot moves variable q by t in direction sigma: a bound flip when leave
// is -1, else q replaces basis[leave], which goes to its upper bound when
// toUpper, and the basis inverse is updated.
func (lp *Bounded) pivot(q int, w []float64, sigma, t float64, leave int, toUpper bool) {
	m := lp.m
	for i := 0; i < m; i++ {
		lp.xB[i] -= t * sigma * w[i]
	}
	if leave < 0 { // bound flip
		if sigma > 0 {
			lp.stat[q] = atUpper
		} else {
			lp.stat[q] = atLower
		}
		return
	}
	out := lp.basis[leave]
	if toUpper {
		lp.stat[out] = atUpper
	} else {
		lp.stat[out] = atLower
	}
	if sigma > 0 {
		lp.xB[leave] = t
	} else {
		lp.xB[leave] = lp.up[q] - t
	}
	lp.basis[leave] = q
	lp.stat[q] = basic
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

// RemoveVars drops the nonbasic variables marked in drop (none of the
// starting basis) and renumbers the rest in order; it returns the new
// index of each old one (-1 dropped).
func (lp *Bounded) RemoveVars(drop []bool) []int {
	newIdx := make([]int, len(lp.cols))
	keep := make([]bool, len(lp.cols))
	for _, j := range lp.start {
		keep[j] = true
	}
	n := 0
	for j := range lp.cols {
		if drop[j] && lp.stat[j] != basic && !keep[j] {
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

// Values writes the current primal solution into x (len = variables).
func (lp *Bounded) Values(x []float64) {
	for j, s := range lp.stat {
		x[j] = 0
		if s == atUpper {
			x[j] = lp.up[j]
		}
	}
	for i, j := range lp.basis {
		x[j] = lp.xB[i]
	}
}

// Objective is cᵀx at the current (primal feasible) solution.
func (lp *Bounded) Objective() float64 {
	z := 0.0
	for j, s := range lp.stat {
		if s == atUpper {
			z += lp.cost[j] * lp.up[j]
		}
	}
	for i, j := range lp.basis {
		z += lp.cost[j] * lp.xB[i]
	}
	return z
}

// NumVars is the number of variables.
func (lp *Bounded) NumVars() int { return len(lp.cols) }

// Basic reports whether variable j is in the basis.
func (lp *Bounded) Basic(j int) bool { return lp.stat[j] == basic }

// Col is variable j's column (owned by lp).
func (lp *Bounded) Col(j int) Column { return lp.cols[j] }

// SetCost sets variable j's cost; the basis stays primal feasible.
func (lp *Bounded) SetCost(j int, c float64) { lp.cost[j] = c }

// ReducedCost is variable j's cost minus y times its column.
func (lp *Bounded) ReducedCost(j int, y []float64) float64 {
	d := lp.cost[j]
	c := lp.cols[j]
	for k, r := range c.Rows {
		d -= y[r] * c.Values[k]
	}
	return d
}

// Ops counts the multiply-adds spent so far (roughly), for work budgets.
func (lp *Bounded) Ops() int { return lp.ops }
