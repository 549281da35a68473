// Package minvalues holds the widening of a launch to meet a NodeClaim's
// minValues: Karpenter truncates a launch to its cheapest instance types
// only as far as minValues allows. Pure: the caller reads the catalog,
// the market and the insufficient-capacity cache.
package minvalues

import (
	"fmt"
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

// Of is the requirements that carry minValues.
func Of(reqs []apiv1.NodeSelectorRequirementWithMinValues) []apiv1.NodeSelectorRequirementWithMinValues {
	var mv []apiv1.NodeSelectorRequirementWithMinValues
	for _, r := range reqs {
		if r.MinValues != nil && *r.MinValues > 0 {
			mv = append(mv, r)
		}
	}
	return mv
}

// Widen is what a launch adds to meet mv: have are the instance types the
// launch already tries (kept first, as they are), more the other types it
// may try, each with its available offerings. The others are taken
// cheapest first, at most maxTypes in all, until mv is met; ok is false
// when even all of them together (tried types) do not meet it.
func Widen(mv []apiv1.NodeSelectorRequirementWithMinValues, have, more []solver.InstanceTypeOption, maxTypes int) (add []solver.InstanceTypeOption, tried int, ok bool) {
	more = append([]solver.InstanceTypeOption(nil), more...)
	sort.SliceStable(more, func(i, j int) bool { return cheapest(more[i].Offerings) < cheapest(more[j].Offerings) })
	if room := maxTypes - len(have); len(more) > room {
		more = more[:max(room, 0)]
	}
	opts := append(append([]solver.InstanceTypeOption(nil), have...), more...)
	n, ok := solver.MinValuesNeeded(mv, opts)
	if !ok {
		return nil, len(opts), false
	}
	return opts[len(have):max(n, len(have))], len(opts), true
}

// Keys names the requirements' minValues ("key>=N, ...").
func Keys(mv []apiv1.NodeSelectorRequirementWithMinValues) string {
	parts := make([]string, len(mv))
	for i, r := range mv {
		parts[i] = fmt.Sprintf("%s>=%d", r.Key, *r.MinValues)
	}
	return strings.Join(parts, ", ")
}

// cheapest is the lowest price among offerings.
func cheapest(offs []catalog.Offering) float64 {
	low := offs[0].Price
	for _, o := range offs[1:] {
		low = min(low, o.Price)
	}
	return low
}
