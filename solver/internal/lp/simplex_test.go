package lp

import (
	"math"
	"testing"
)

func unit(row int, v float64) Column { return Column{Rows: []int32{int32(row)}, Values: []float64{v}} }

// textbook builds max 3x+5y s.t. x ≤ 4, 2y ≤ 12, 3x+2y ≤ 18 as
// min -3x-5y with one slack per row, the slacks as the starting basis.
func textbook(t *testing.T) (*Bounded, int, int) {
	t.Helper()
	lp := New([]float64{4, 12, 18})
	x := lp.AddVar(Column{Rows: []int32{0, 2}, Values: []float64{1, 3}}, -3, math.Inf(1))
	y := lp.AddVar(Column{Rows: []int32{1, 2}, Values: []float64{2, 2}}, -5, math.Inf(1))
	var basis []int
	for r := 0; r < 3; r++ {
		basis = append(basis, lp.AddVar(unit(r, 1), 0, math.Inf(1)))
	}
	if !lp.SetBasis(basis) {
		t.Fatal("slack basis reported singular")
	}
	return lp, x, y
}

func TestSolveReachesTheTextbookOptimum(t *testing.T) {
	lp, x, y := textbook(t)
	if !lp.Solve(100) {
		t.Fatal("Solve stopped before the optimum")
	}
	if got := lp.Objective(); math.Abs(got+36) > 1e-9 {
		t.Fatalf("objective %v, want -36", got)
	}
	vals := make([]float64, lp.NumVars())
	lp.Values(vals)
	if math.Abs(vals[x]-2) > 1e-9 || math.Abs(vals[y]-6) > 1e-9 {
		t.Fatalf("x, y = %v, %v, want 2, 6", vals[x], vals[y])
	}
	want := []float64{0, -1.5, -1}
	for r, d := range lp.Duals() {
		if math.Abs(d-want[r]) > 1e-9 {
			t.Fatalf("duals %v, want %v", lp.Duals(), want)
		}
	}
	for j := 0; j < lp.NumVars(); j++ {
		if lp.Basic(j) && math.Abs(lp.ReducedCost(j, lp.Duals())) > 1e-9 {
			t.Fatalf("basic variable %d has reduced cost %v", j, lp.ReducedCost(j, lp.Duals()))
		}
	}
}

func TestSolveFlipsBoundedVariables(t *testing.T) {
	// min -x-y s.t. x+s0 = 4, y+s1 = 3, x ≤ 2: x stops at its bound.
	lp := New([]float64{4, 3})
	x := lp.AddVar(unit(0, 1), -1, 2)
	y := lp.AddVar(unit(1, 1), -1, math.Inf(1))
	s0 := lp.AddVar(unit(0, 1), 0, math.Inf(1))
	s1 := lp.AddVar(unit(1, 1), 0, math.Inf(1))
	if !lp.SetBasis([]int{s0, s1}) || !lp.Solve(10) {
		t.Fatal("not solved")
	}
	vals := make([]float64, lp.NumVars())
	lp.Values(vals)
	if vals[x] != 2 || vals[y] != 3 || lp.Objective() != -5 {
		t.Fatalf("x %v y %v objective %v, want 2 3 -5", vals[x], vals[y], lp.Objective())
	}
}

func TestSolveReportsThePivotLimit(t *testing.T) {
	lp, _, _ := textbook(t)
	if lp.Solve(1) {
		t.Fatal("one pivot reported optimal; the textbook LP needs more")
	}
	if lp.Ops() == 0 {
		t.Fatal("no work counted")
	}
}

func TestSetCostResolvesFromTheLastBasis(t *testing.T) {
	lp, x, y := textbook(t)
	lp.Solve(100)
	lp.SetCost(y, 0) // max 3x: x = 4
	if !lp.Solve(100) {
		t.Fatal("not solved")
	}
	vals := make([]float64, lp.NumVars())
	lp.Values(vals)
	if math.Abs(vals[x]-4) > 1e-9 || math.Abs(lp.Objective()+12) > 1e-9 {
		t.Fatalf("x %v objective %v, want 4 -12", vals[x], lp.Objective())
	}
}

func TestRemoveVarsKeepsBasisAndRenumbers(t *testing.T) {
	lp, x, y := textbook(t)
	extra := lp.AddVar(unit(0, 1), 10, math.Inf(1)) // never enters
	lp.Solve(100)
	drop := make([]bool, lp.NumVars())
	drop[extra], drop[x] = true, true // x is basic: kept
	idx := lp.RemoveVars(drop)
	if idx[extra] != -1 || idx[x] != x || idx[y] != y || lp.NumVars() != 5 {
		t.Fatalf("renumbering %v, %d variables", idx, lp.NumVars())
	}
	if math.Abs(lp.Objective()+36) > 1e-9 {
		t.Fatalf("objective %v after removal, want -36", lp.Objective())
	}
}

func TestSetBasisRejectsASingularBasis(t *testing.T) {
	lp := New([]float64{1, 1})
	a := lp.AddVar(unit(0, 1), 0, math.Inf(1))
	b := lp.AddVar(unit(0, 2), 0, math.Inf(1))
	if lp.SetBasis([]int{a, b}) {
		t.Fatal("two columns on one row accepted as a basis")
	}
}
