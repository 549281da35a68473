package solver

import (
	"math"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// launchOrder is the capacity-type precedence a launch follows when several
// are allowed (Karpenter's WorstLaunchPrice): reserved, then spot, then
// on-demand.
var launchOrder = []string{"reserved", apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand}

// WorstLaunchPrice is what launching one of an instance type's offerings
// may cost at worst: the most expensive available offering of the capacity
// type the launch would use (reserved before spot before on-demand), USD/hour;
// +Inf when no offering is available. The offerings are taken as already
// compatible with the NodeClaim's requirements (NewNodeClaim's are).
func WorstLaunchPrice(offs []catalog.Offering) float64 {
	for _, ct := range launchOrder {
		worst, found := 0.0, false
		for _, o := range offs {
			if o.Available && o.CapacityType == ct && (!found || o.Price > worst) {
				worst, found = o.Price, true
			}
		}
		if found {
			return worst
		}
	}
	return math.Inf(1)
}

// MinValuesNeeded checks the minValues of reqs against instance types in
// their order: it returns how many of the first types are needed to show
// minValues distinct allowed values of every such key (0 when no
// requirement has minValues), and false when all of them together do not.
// Instance-type labels (catalog.InstanceType.Labels) and the offering keys
// (zone, region, capacity type) are counted; a minValues on any other key
// (fixed per NodePool) is not a choice between types and is not checked.
func MinValuesNeeded(reqs []apiv1.NodeSelectorRequirementWithMinValues, types []InstanceTypeOption) (int, bool) {
	needed := 0
	for _, r := range reqs {
		if r.MinValues == nil || *r.MinValues <= 0 || (!typeLevelKeys[r.Key] && !isOfferingKey(r.Key)) {
			continue
		}
		seen := map[string]bool{}
		n := -1
		for i, it := range types {
			for _, v := range keyValues(r.Key, it) {
				if r.Matches(v, true) {
					seen[v] = true
				}
			}
			if len(seen) >= *r.MinValues {
				n = i + 1
				break
			}
		}
		if n < 0 {
			return 0, false
		}
		needed = max(needed, n)
	}
	return needed, true
}

// keyValues are the values a node of the type may carry for key.
func keyValues(key string, it InstanceTypeOption) []string {
	if typeLevelKeys[key] {
		if v, ok := it.Type.Labels()[key]; ok {
			return []string{v}
		}
		return nil
	}
	var out []string
	for i := range it.Offerings {
		if !it.Offerings[i].Available {
			continue
		}
		if v, ok := offeringValue(key, &it.Offerings[i]); ok {
			out = append(out, v)
		}
	}
	return out
}
