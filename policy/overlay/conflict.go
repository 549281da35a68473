package overlay

import (
	"fmt"
	"slices"

	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
)

// claims remembers, per offering price and per (pool, type, resource), the
// last overlay that selected it: one of the same weight selecting it again
// conflicts (Karpenter keeps the lowest weight seen so far).
type claims map[string]claim

type claim struct {
	overlay string
	weight  int32
}

// each calls fn with the key and description of everything o would set.
func each(o *v1alpha1.NodeOverlay, pools []solver.NodePool, fn func(key, what string)) {
	change := priceChange(o)
	names := make([]corev1.ResourceName, 0, len(o.Spec.Capacity))
	for n := range o.Spec.Capacity {
		names = append(names, n)
	}
	slices.Sort(names)
	for p := range pools {
		pool := &pools[p]
		for _, it := range pool.InstanceTypes {
			if !typeMatches(o, nodeLabels(pool, it.Type)) {
				continue
			}
			matched := false
			for _, off := range it.Offerings {
				if !offeringMatches(o, off.Zone, off.CapacityType) {
					continue
				}
				matched = true
				if change != "" {
					fn("price/"+pool.Name+"/"+it.Type.Name+"/"+off.Zone+"/"+off.CapacityType,
						fmt.Sprintf("the price of %s %s in %s (NodePool %s)", it.Type.Name, off.CapacityType, off.Zone, pool.Name))
				}
			}
			if !matched {
				continue
			}
			for _, n := range names {
				fn("capacity/"+pool.Name+"/"+it.Type.Name+"/"+string(n), fmt.Sprintf("%s of %s (NodePool %s)", n, it.Type.Name, pool.Name))
			}
		}
	}
}

// conflict names the overlay of o's weight that already set something o
// sets, and what.
func (c claims) conflict(o *v1alpha1.NodeOverlay, pools []solver.NodePool) (string, string) {
	var other, what string
	each(o, pools, func(key, desc string) {
		if cl, ok := c[key]; ok && other == "" && cl.weight == o.WeightOrZero() {
			other, what = cl.overlay, desc
		}
	})
	return other, what
}

func (c claims) take(o *v1alpha1.NodeOverlay, pools []solver.NodePool) {
	each(o, pools, func(key, _ string) { c[key] = claim{overlay: o.Name, weight: o.WeightOrZero()} })
}
