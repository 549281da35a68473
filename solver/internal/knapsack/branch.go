package knapsack

// BranchAndBound searches for a configuration worth more than threshold,
// depth-first over the items in order (larger counts first), pruning
// subtrees whose bound is within slack (relative) of the best value, and
// stops after limit bound terms. It returns an upper bound on the
// optimum (the best value found, or threshold, within slack; with the
// bounds of the subtrees the limit left open when it stopped), the best
// configuration found above threshold (nil if none), whether the search
// completed, and the work spent. The configuration is owned by k.
func (k *Knapsack) BranchAndBound(capacity []int64, threshold, slack float64, limit int) (upper float64, counts []int64, complete bool, work int) {
	D, n := k.D, k.Len()
	k.rem = append(k.rem[:0], make([]int64, (n+1)*D)...)
	copy(k.rem, capacity)
	k.cur = append(k.cur[:0], make([]int64, n)...)
	k.bestK = append(k.bestK[:0], make([]int64, n)...)
	k.best, k.found, k.open, k.limit, k.aborted, k.ops = threshold, false, 0, limit, false, 0
	k.slack = slack
	k.dfs(0, 0)
	u := k.best * (1 + slack)
	if k.aborted {
		u = max(u, k.open)
	}
	if !k.found {
		return u, nil, !k.aborted, k.ops
	}
	return u, k.bestK, !k.aborted, k.ops
}

// bound is an upper bound on the value items i.. can add within rem,
// with item i's count capped at first when first ≥ 0: the fractional
// knapsack on the surrogate constraint Σ wt·req ≤ Σ wt·rem, each item
// also capped by what fits rem alone.
func (k *Knapsack) bound(i int, rem []int64, first int64) float64 {
	D := k.D
	c := 0.0
	for d, w := range k.Weight {
		c += w * float64(rem[d])
	}
	tot := 0.0
	for j := i; j < k.Len(); j++ {
		m := k.Count[j]
		if j == i && first >= 0 {
			m = min(m, first)
		}
		m = CopiesFitting(k.Req[j*D:(j+1)*D], rem, m)
		if m <= 0 {
			continue
		}
		if s := k.Size[j] * float64(m); s <= c {
			tot += k.Value[j] * float64(m)
			c -= s
		} else {
			tot += k.Value[j] * c / k.Size[j]
			break
		}
	}
	k.ops += (k.Len() - i + 1) * D
	return tot
}

// dfs explores the counts of items i.. with value v so far (depth-first,
// larger counts first). When the work limit stops it, open gets the bound
// of every subtree left unexplored.
func (k *Knapsack) dfs(i int, v float64) {
	D := k.D
	if v > k.best {
		k.best, k.found = v, true
		copy(k.bestK, k.cur)
	}
	n := k.Len()
	if i == n {
		return
	}
	rem := k.rem[i*D : (i+1)*D]
	if k.ops >= k.limit {
		k.aborted = true
		k.open = max(k.open, v+k.bound(i, rem, -1))
		return
	}
	req := k.item(i)
	kmax := CopiesFitting(req, rem, k.Count[i])
	next := k.rem[(i+1)*D : (i+2)*D]
	for c := kmax; c >= 0; c-- {
		for d := range next {
			next[d] = rem[d] - c*req[d]
		}
		v2 := v + float64(c)*k.Value[i]
		if v2+k.bound(i+1, next, -1) <= k.best*(1+k.slack) {
			continue
		}
		k.cur[i] = c
		k.dfs(i+1, v2)
		k.cur[i] = 0
		if k.aborted {
			if c > 0 {
				k.open = max(k.open, v+k.bound(i, rem, c-1))
			}
			return
		}
	}
}
