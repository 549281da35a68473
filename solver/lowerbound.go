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
// Method (a weighted-volume bound, i.e. the dual of the fractional bin
// covering relaxation restricted to one price per resource mix): for
// weights λ over cpu, memory and nvidia.com/gpu with λ_cpu+λ_mem+λ_gpu = 1,
// a node of type t whose pods S fit its usable resources u(t) (allocatable
// minus daemonset overhead) satisfies Σ_{p∈S} Σ_r λ_r·req_r(p)/u_r(t) ≤ 1,
// so its price P(t) ≥ Σ_{p∈S} P(t)·Σ_r λ_r·req_r(p)/u_r(t). Hence any plan
// costs at least
//
//	LB(λ) = Σ_p min_{t ∈ T(p)} P(t, p) · Σ_r λ_r · req_r(p) / u_r(t)
//
// where T(p) are the types (in any NodePool whose taints the pod tolerates
// and whose requirements its most relaxed node affinity meets) that fit p,
// and P(t, p) the cheapest available offering of t compatible with p. The
// result is the maximum of LB(λ) over a grid of step 0.05 on the simplex.
// NodePool limits, topology and host ports are relaxed away (the bound
// stays valid, it only gets weaker).
func LowerBound(in Input) float64 {
	p := prepare(in)
	type group struct {
		req resources.List
		sig *sigInfo
		n   int
	}
	var groups []*group
	idx := map[groupKey]*group{}
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
		g := &group{req: pi.req, sig: last, n: 1}
		idx[k] = g
		groups = append(groups, g)
	}
	dims := []int{resources.CPU, resources.Memory, resources.NvidiaGPU}
	// Per group, the candidate (price/usable per dim) vectors.
	type cand struct{ w [3]float64 }
	cands := make([][]cand, len(groups))
	for gi, g := range groups {
		for _, pl := range p.pools {
			sp := g.sig.forPool(pl)
			if sp.taint != nil {
				continue
			}
			for t := range pl.types {
				var m uint64
				for _, c := range sp.terms {
					m |= c.masks[t]
				}
				if m == 0 || !g.req.Fits(pl.usable[t]) {
					continue
				}
				price := pl.types[t].cheapest(m)
				var c cand
				for d, r := range dims {
					if g.req[r] > 0 {
						c.w[d] = price * float64(g.req[r]) / float64(pl.usable[t][r])
					}
				}
				cands[gi] = append(cands[gi], c)
			}
		}
	}
	best := 0.0
	const steps = 20
	for a := 0; a <= steps; a++ {
		for b := 0; a+b <= steps; b++ {
			l := [3]float64{float64(a) / steps, float64(b) / steps, float64(steps-a-b) / steps}
			total := 0.0
			for gi, g := range groups {
				lo := math.Inf(1)
				for _, c := range cands[gi] {
					if v := l[0]*c.w[0] + l[1]*c.w[1] + l[2]*c.w[2]; v < lo {
						lo = v
					}
				}
				if !math.IsInf(lo, 1) {
					total += lo * float64(g.n)
				}
			}
			best = max(best, total)
		}
	}
	return best
}

type groupKey struct {
	req resources.List
	sig *sigInfo
}
