package solver

import (
	"hash/fnv"
	"math"
	"strconv"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Generated values: Karpenter labels a NodeClaim whose requirement on a
// custom key names no value (Exists, NotIn, or integer bounds) with a
// random integer within the bounds (Requirement.Any). Joinery's solver is
// deterministic, so the integer is a hash of the pool, the key and the
// claim's pods instead: distinct between the claims of a plan, the same
// for the same input.

// seed is the hash a generated value of key on the claim comes from.
func (c *claim) seed(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(c.pool.np.Name + "\x00" + key))
	for _, pi := range c.pods {
		h.Write([]byte{0})
		h.Write([]byte(pi.key))
	}
	return h.Sum64()
}

// generatedValue is an integer every requirement in reqs admits, taken
// from seed within their bounds (0 to MaxInt64-1 without any, as
// Karpenter's), or "" when the bounds leave none.
func generatedValue(reqs []req, seed uint64) string {
	lo, hi := int64(0), int64(math.MaxInt64-1)
	for _, r := range reqs {
		if len(r.Values) != 1 {
			continue
		}
		b, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			continue
		}
		if (r.Operator == apiv1.OpGt && b == math.MaxInt64) || (r.Operator == apiv1.OpLt && b == math.MinInt64) {
			return ""
		}
		switch r.Operator {
		case apiv1.OpGt:
			lo = max(lo, b+1)
		case apiv1.OpGte:
			lo = max(lo, b)
		case apiv1.OpLt:
			hi = min(hi, b-1)
		case apiv1.OpLte:
			hi = min(hi, b)
		}
	}
	if lo > hi {
		return ""
	}
	span := uint64(hi) - uint64(lo) + 1 // mod 2^64: 0 when the span is every int64
	off := seed
	if span != 0 {
		off %= span
	}
	// NotIn values may exclude the first pick: step on, at most once per
	// excluded value (and wrap within the span).
	tries := 1
	for _, r := range reqs {
		tries += len(r.Values)
	}
	for i := 0; i < tries; i++ {
		v := strconv.FormatInt(int64(uint64(lo)+off), 10)
		if admitsAll(reqs, v) {
			return v
		}
		off++
		if span != 0 && off == span {
			off = 0
		}
	}
	return ""
}
