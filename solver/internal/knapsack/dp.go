package knapsack

import "sort"

// grid is the capacity grid of the dynamic program: the dimensions that
// can bind, each in units of the gcd of its requests.
type grid struct {
	dims   []int
	unit   []int64
	capU   []int64 // capacity in units
	stride []int   // of each dimension in the flattened table
	size   int     // cells
}

// chunk is one 0/1 piece of an item's count (binary splitting): c copies
// of item, w units of each grid dimension, off cells in the table.
type chunk struct {
	item int
	c    int64
	off  int
	w    []int64
}

// DP solves the knapsack exactly over the grid of capacity, in units of
// the gcd of each dimension's requests, over the dimensions that can bind:
// the dimension all items request that admits the fewest items (that
// count, m) and every dimension the m largest requests would overflow. It
// declines (ok false) when the grid times the binary splitting of the
// counts exceeds limit cells, and checks its configuration against every
// dimension before returning it with its value and the cells spent.
func (k *Knapsack) DP(capacity []int64, limit int) (value float64, counts []int64, cells int, ok bool) {
	n := k.Len()
	maxCount, countDim := k.countBound(capacity)
	g, ok := k.grid(capacity, maxCount, countDim, limit)
	if !ok {
		return 0, nil, 0, false
	}
	if len(g.dims) == 0 { // everything fits
		ks := append([]int64(nil), k.Count...)
		v := 0.0
		for i := range ks {
			v += float64(ks[i]) * k.Value[i]
		}
		if !k.fits(ks, capacity) {
			return 0, nil, 0, false
		}
		return v, ks, n, true
	}
	chunks := k.chunks(g)
	if g.size*len(chunks) > limit {
		return 0, nil, 0, false
	}
	k.fill(g, chunks)
	ks := k.traceBack(g, chunks)
	// The configuration must fit every dim (the dropped ones cannot bind).
	if !k.fits(ks, capacity) {
		return 0, nil, 0, false
	}
	return k.table[g.size-1], ks, g.size * len(chunks), true
}

// countBound is the most items any configuration holds, by the dimension
// all items request that admits the fewest (countDim, -1 when the count
// bounds alone are fewer): the others are judged by it.
func (k *Knapsack) countBound(capacity []int64) (maxCount int64, countDim int) {
	D, n := k.D, k.Len()
	maxCount, countDim = 0, -1
	for i := range k.Count {
		maxCount += k.Count[i]
	}
	idx := make([]int, n)
	for d := 0; d < D; d++ {
		all := true
		for i := 0; i < n; i++ {
			all = all && k.Req[i*D+d] > 0
		}
		if !all {
			continue
		}
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(x, y int) bool { return k.Req[idx[x]*D+d] < k.Req[idx[y]*D+d] })
		left, cnt := capacity[d], int64(0)
		for _, i := range idx {
			q := k.Req[i*D+d]
			c := min(k.Count[i], left/q)
			cnt += c
			left -= c * q
			if c < k.Count[i] {
				break
			}
		}
		if cnt < maxCount {
			maxCount, countDim = cnt, d
		}
	}
	return maxCount, countDim
}

// grid keeps countDim and the dimensions that maxCount items of the
// largest requests would overflow; it declines when the grid exceeds
// limit cells.
func (k *Knapsack) grid(capacity []int64, maxCount int64, countDim, limit int) (grid, bool) {
	D, n := k.D, k.Len()
	var g grid
	idx := make([]int, n)
	cells := 1
	for d := 0; d < D; d++ {
		if d != countDim && !k.canBind(d, capacity[d], maxCount, idx) {
			continue
		}
		u := int64(0)
		for i := 0; i < n; i++ {
			u = gcd64(u, k.Req[i*D+d])
		}
		if u <= 0 {
			continue
		}
		c := capacity[d] / u
		if c+1 > int64(limit) {
			return grid{}, false
		}
		cells *= int(c + 1)
		if cells > limit {
			return grid{}, false
		}
		g.dims = append(g.dims, d)
		g.unit = append(g.unit, u)
		g.capU = append(g.capU, c)
	}
	g.stride = make([]int, len(g.dims))
	g.size = 1
	for j := range g.dims {
		g.stride[j] = g.size
		g.size *= int(g.capU[j] + 1)
	}
	return g, true
}

// canBind reports whether maxCount items, the largest requests of
// dimension d first, overflow its capacity c (idx is scratch, len n).
func (k *Knapsack) canBind(d int, c, maxCount int64, idx []int) bool {
	D := k.D
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return k.Req[idx[x]*D+d] > k.Req[idx[y]*D+d] })
	left, need := maxCount, int64(0)
	for _, i := range idx {
		m := min(left, k.Count[i])
		need += m * k.Req[i*D+d]
		left -= m
		if left == 0 {
			break
		}
	}
	return need > c
}

// chunks splits every item's count into 0/1 chunks of 1, 2, 4... copies.
func (k *Knapsack) chunks(g grid) []chunk {
	D := k.D
	var chunks []chunk
	for i := 0; i < k.Len(); i++ {
		left := k.Count[i]
		for c := int64(1); left > 0; c *= 2 {
			c = min(c, left)
			left -= c
			ch := chunk{item: i, c: c, w: make([]int64, len(g.dims))}
			for j, d := range g.dims {
				ch.w[j] = c * k.Req[i*D+d] / g.unit[j]
				ch.off += int(ch.w[j]) * g.stride[j]
			}
			chunks = append(chunks, ch)
		}
	}
	return chunks
}

// fill runs the 0/1 knapsack recursion over the chunks, recording in
// taken which chunk improved which cell. Dimension 0 varies fastest: per
// setting of the others (an odometer, from the top), one tight loop over
// it.
func (k *Knapsack) fill(g grid, chunks []chunk) {
	S := g.size
	words := (S + 63) / 64
	k.table = append(k.table[:0], make([]float64, S)...)
	k.taken = append(k.taken[:0], make([]uint64, words*len(chunks))...)
	f := k.table
	capU := g.capU
	coord := make([]int64, len(g.dims))
	rows := S / int(capU[0]+1)
	for ci, ch := range chunks {
		v := float64(ch.c) * k.Value[ch.item]
		tk := k.taken[ci*words : (ci+1)*words]
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
}

// traceBack reads the optimal counts off the taken bits, from the full
// capacity cell.
func (k *Knapsack) traceBack(g grid, chunks []chunk) []int64 {
	words := (g.size + 63) / 64
	ks := make([]int64, k.Len())
	s := g.size - 1
	for ci := len(chunks) - 1; ci >= 0; ci-- {
		if k.taken[ci*words+s/64]&(1<<(s%64)) != 0 {
			ks[chunks[ci].item] += chunks[ci].c
			s -= chunks[ci].off
		}
	}
	return ks
}
