package knapsack

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// brute is the knapsack optimum by enumeration.
func brute(k *Knapsack, capacity []int64) float64 {
	best := 0.0
	rem := append([]int64(nil), capacity...)
	var rec func(i int, v float64)
	rec = func(i int, v float64) {
		if i == k.Len() {
			best = max(best, v)
			return
		}
		req := k.item(i)
		for c := int64(0); c <= CopiesFitting(req, rem, k.Count[i]); c++ {
			for d, q := range req {
				rem[d] -= c * q
			}
			rec(i+1, v+float64(c)*k.Value[i])
			for d, q := range req {
				rem[d] += c * q
			}
		}
	}
	rec(0, 0)
	return best
}

// random is a small instance over 2 dims with surrogate weights
// 1/capacity, items by value per surrogate size, best first (the order
// branch and bound's bounds need).
func random(r *rand.Rand) (*Knapsack, []int64) {
	capacity := []int64{int64(4 + r.IntN(12)), int64(4 + r.IntN(12))}
	k := New(2)
	k.Weight[0], k.Weight[1] = 1/float64(capacity[0]), 1/float64(capacity[1])
	type item struct {
		req         []int64
		value, size float64
		count       int64
	}
	var items []item
	for i := 0; i < 1+r.IntN(4); i++ {
		req := []int64{int64(1 + r.IntN(4)), int64(r.IntN(4))}
		size := k.Weight[0]*float64(req[0]) + k.Weight[1]*float64(req[1])
		items = append(items, item{req, float64(1 + r.IntN(9)), size, int64(1 + r.IntN(4))})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].value/items[i].size > items[j].value/items[j].size })
	for _, it := range items {
		k.Add(it.req, it.value, it.count, it.size)
	}
	return k, capacity
}

func TestDPIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		k, capacity := random(r)
		v, counts, _, ok := k.DP(capacity, 1e6)
		if !ok {
			t.Fatalf("instance %d: DP declined a small grid", n)
		}
		if want := brute(k, capacity); math.Abs(v-want) > 1e-9 {
			t.Fatalf("instance %d: DP %v, optimum %v", n, v, want)
		}
		got := 0.0
		for i, c := range counts {
			got += float64(c) * k.Value[i]
			if c < 0 || c > k.Count[i] {
				t.Fatalf("instance %d: count %d of item %d outside [0, %d]", n, c, i, k.Count[i])
			}
		}
		if math.Abs(got-v) > 1e-9 || !k.fits(counts, capacity) {
			t.Fatalf("instance %d: configuration %v worth %v (DP %v), fits %v", n, counts, got, v, k.fits(counts, capacity))
		}
	}
}

func TestDPDeclinesLargeGrids(t *testing.T) {
	k := New(1)
	k.Add([]int64{1}, 1, 1000, 1)
	k.Add([]int64{3}, 2, 1000, 3)
	if _, _, _, ok := k.DP([]int64{1000}, 100); ok {
		t.Fatal("a 1,001-cell grid accepted under a 100-cell limit")
	}
}

func TestBranchAndBoundIsExactWithoutLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 300; n++ {
		k, capacity := random(r)
		want := brute(k, capacity)
		u, counts, complete, _ := k.BranchAndBound(capacity, 0, 0, math.MaxInt)
		if !complete || math.Abs(u-want) > 1e-9 {
			t.Fatalf("instance %d: bound %v complete %v, optimum %v", n, u, complete, want)
		}
		if want > 0 && counts == nil {
			t.Fatalf("instance %d: no configuration above 0 found (optimum %v)", n, want)
		}
	}
}

func TestBranchAndBoundBoundsTheOptimumUnderALimit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 300; n++ {
		k, capacity := random(r)
		want := brute(k, capacity)
		u, _, _, _ := k.BranchAndBound(capacity, 0, 0, 1)
		if u < want-1e-9 {
			t.Fatalf("instance %d: bound %v below the optimum %v", n, u, want)
		}
	}
}

func TestCopiesFitting(t *testing.T) {
	if got := CopiesFitting([]int64{2, 0, 3}, []int64{9, 0, 10}, 7); got != 3 {
		t.Fatalf("CopiesFitting = %d, want 3", got)
	}
	if got := CopiesFitting([]int64{1}, []int64{10}, 4); got != 4 {
		t.Fatalf("CopiesFitting = %d, want the count bound 4", got)
	}
}
