package solver

// minValuesHold is minValuesOK under the pool's policy: with BestEffort a
// set of types that cannot meet minValues is kept (its claim's minValues
// are relaxed when it is written: relaxMinValues), as Karpenter's
// MIN_VALUES_POLICY=BestEffort keeps it.
func minValuesHold(pl *poolInfo, ts []int32, ms []uint64) bool {
	return pl.bestEffort || minValuesOK(pl, ts, ms)
}

// relaxMinValues lowers, with BestEffort, each requirement's minValues to
// the number of distinct values of its key the claim's instance types (and
// their offerings, for an offering key) meet, as Karpenter lowers the
// NodeClaim's, and reports whether it lowered any. A key none of them
// meets loses its minValues (the CRD's minimum is 1).
func relaxMinValues(nc *NewNodeClaim) bool {
	relaxed := false
	for i := range nc.Requirements {
		r := &nc.Requirements[i]
		if r.MinValues == nil || *r.MinValues <= 0 || (!typeLevelKeys[r.Key] && !isOfferingKey(r.Key)) {
			continue
		}
		seen := map[string]bool{}
		for _, o := range nc.InstanceTypes {
			if typeLevelKeys[r.Key] {
				if v, has := o.Type.Labels()[r.Key]; has && r.Matches(v, true) {
					seen[v] = true
				}
				continue
			}
			for j := range o.Offerings {
				if v, has := offeringValue(r.Key, &o.Offerings[j]); has && r.Matches(v, true) {
					seen[v] = true
				}
			}
		}
		if n := len(seen); n < *r.MinValues {
			relaxed = true
			if n == 0 {
				r.MinValues = nil
				continue
			}
			r.MinValues = &n
		}
	}
	return relaxed
}
