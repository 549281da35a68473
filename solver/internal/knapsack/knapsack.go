// Package knapsack solves the bounded multi-dimensional knapsack
//
//	max Σ_i k_i·v_i  s.t.  Σ_i k_i·req_i ≤ cap,  0 ≤ k_i ≤ n_i integer,
//
// exactly, by a dynamic program over the capacity grid when that grid is
// small, or by depth-first branch and bound under a work limit, which
// returns an upper bound on the optimum when the limit stops it. It is the
// pricing problem of the solver's configuration-LP lower bound.
package knapsack

// Knapsack is one instance: items over D dimensions, in the order branch
// and bound tries them, which must be best value per surrogate size first
// (its subtree bounds rely on it), and the scratch space of its solvers,
// reused across instances (Reset).
type Knapsack struct {
	D int
	// Per item: requests (n×D, row-major), value, count bound and
	// surrogate size (Σ_d Weight[d]·req[d]).
	Req   []int64
	Value []float64
	Count []int64
	Size  []float64
	// Weight is the surrogate weight per unit of each dimension; branch
	// and bound bounds subtrees by the fractional knapsack on the
	// surrogate constraint Σ Weight·req ≤ Σ Weight·rem.
	Weight []float64

	// dynamic program scratch
	table []float64
	taken []uint64

	// branch and bound state
	slack   float64 // optima are proved to this (relative)
	rem     []int64 // remaining capacity at each depth, (n+1)×D
	cur     []int64
	bestK   []int64
	best    float64
	found   bool
	open    float64 // largest bound of a subtree the work limit left open
	limit   int     // work limit (bound terms)
	aborted bool
	ops     int
}

// New returns an empty knapsack over d dimensions.
func New(d int) *Knapsack {
	return &Knapsack{D: d, Weight: make([]float64, d)}
}

// Reset drops the items (keeping the scratch space).
func (k *Knapsack) Reset() {
	k.Req, k.Value, k.Count, k.Size = k.Req[:0], k.Value[:0], k.Count[:0], k.Size[:0]
}

// Add appends an item.
func (k *Knapsack) Add(req []int64, value float64, count int64, size float64) {
	k.Req = append(k.Req, req...)
	k.Value = append(k.Value, value)
	k.Count = append(k.Count, count)
	k.Size = append(k.Size, size)
}

// Len is the number of items.
func (k *Knapsack) Len() int { return len(k.Value) }

// item is item i's requests.
func (k *Knapsack) item(i int) []int64 { return k.Req[i*k.D : (i+1)*k.D] }

// CopiesFitting is how many copies of an item of requests req, at most n,
// fit the remaining capacity rem (per dimension).
func CopiesFitting(req, rem []int64, n int64) int64 {
	for d, q := range req {
		// n copies fitting needs no division (the common case, and a
		// division costs tens of cycles).
		if q > 0 && n*q > rem[d] {
			n = rem[d] / q
		}
	}
	return n
}

// fits reports whether counts ks fit capacity in every dimension.
func (k *Knapsack) fits(ks []int64, capacity []int64) bool {
	D, n := k.D, k.Len()
	for d := 0; d < D; d++ {
		use := int64(0)
		for i := 0; i < n; i++ {
			use += ks[i] * k.Req[i*D+d]
		}
		if use > capacity[d] {
			return false
		}
	}
	return true
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
