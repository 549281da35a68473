package solver

import "math/bits"

// costEps absorbs float rounding in the USD/hour limit: usage equal to
// the limit is allowed, as for spec.limits.
const costEps = 1e-9

// dearest is the highest price among the offerings in mask (USD/hour), 0
// when none.
func (ti *typeInfo) dearest(mask uint64) float64 {
	worst := 0.0
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if i >= len(ti.prices) {
			break
		}
		worst = max(worst, ti.prices[i])
	}
	return worst
}

// launchUSD is the highest price among the allowed offerings of the first
// MaxInstanceTypes types of ts: what a claim counts against its pool's
// USD/hour limit, since the launch may land on any of them (as launchCap
// counts the largest capacity). 0 when the pool has no such limit.
func launchUSD(pl *poolInfo, ts []int32, ms []uint64) float64 {
	if !pl.np.HasCostLimit {
		return 0
	}
	worst := 0.0
	for i, t := range ts[:min(len(ts), MaxInstanceTypes)] {
		worst = max(worst, pl.types[t].dearest(ms[i]))
	}
	return worst
}

// costOK reports whether a node that may cost usd fits the pool's
// USD/hour limit on top of used.
func costOK(pl *poolInfo, used, usd float64) bool {
	return !pl.np.HasCostLimit || used+usd <= pl.np.CostLimit+costEps
}

// podUSD is type t's dearest offering among those the pod's terms allow.
func podUSD(pl *poolInfo, sp *poolSignature, t int) float64 {
	if !pl.np.HasCostLimit {
		return 0
	}
	var m uint64
	for _, c := range sp.terms {
		m |= c.masks[t]
	}
	return pl.types[t].dearest(m)
}
