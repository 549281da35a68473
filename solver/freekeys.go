package solver

import (
	apiv1 "github.com/joinery/joinery/api/v1"
)

// Free keys: label keys only a NodePool requirement defines, such as
// topology.example.io/cell In [c1, c2, c3]. As in Karpenter, the values of
// the pool's In requirements on such a key are topology domains, and each
// new NodeClaim is given one of them: the one topology pinned it to, else
// the first (in sort order) its pods' requirements admit, where Karpenter
// takes an arbitrary one. The NodeClaim's requirement on the key is then
// In [that value], which labels its node.

// freeValues is the values a NodeClaim of the pool may be given on a free
// key: those of its In requirements on the key that all its requirements
// on the key admit, sorted (none for a key with no In requirement: Exists
// or NotIn alone name no domain, and the node does not get the label).
func (pl *poolInfo) freeValues(key string) []string {
	if pl.kind(key) != keyFree {
		return nil
	}
	rs := pl.free[key]
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Operator != apiv1.OpIn {
			continue
		}
		for _, v := range r.Values {
			if admitsAll(rs, v) {
				seen[v] = true
			}
		}
	}
	return sortedKeys(seen)
}

func admitsAll(reqs []req, v string) bool {
	for _, r := range reqs {
		if !r.Matches(v, true) {
			return false
		}
	}
	return true
}

// pinsFreeOK checks that the values pinned on free keys (pins, or the
// claim's own when pins has none for a key) are admitted by the claim's and
// the new term's requirements on those keys.
func (p *prepared) pinsFreeOK(pl *poolInfo, claimPins, pins *keyVals, have, add []req) bool {
	for k := 1; k < len(p.keys); k++ {
		x := pins[k]
		if x < 0 && claimPins != nil {
			x = claimPins[k]
		}
		if x < 0 || pl.kind(p.keys[k].name) != keyFree {
			continue
		}
		key, v := p.keys[k].name, p.keys[k].values[x]
		for _, list := range [][]req{have, add} {
			for _, r := range list {
				if r.Key == key && !r.Matches(v, true) {
					return false
				}
			}
		}
	}
	return true
}

// claimFreeValue is the value a new NodeClaim is given on a free key of
// its pool ("" when the pool allows none): the pinned one, else the first
// the claim's requirements admit.
func (p *prepared) claimFreeValue(c *claim, key string) string {
	for k := 1; k < len(p.keys); k++ {
		if p.keys[k].name == key && c.pins[k] >= 0 {
			return p.keys[k].values[c.pins[k]]
		}
	}
	for _, v := range c.pool.freeValues(key) {
		ok := true
		for _, r := range c.free {
			if r.Key == key && !r.Matches(v, true) {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return ""
}

// giveFreeValues narrows the claim's requirements on each free key of its
// pool to In [the value it is given], in place of the first requirement on
// the key (the others on it are dropped: the value meets them), and labels
// the NodeClaim with it, as Karpenter labels a NodeClaim with the values of
// its custom requirements.
func (p *prepared) giveFreeValues(c *claim, nc *NewNodeClaim) {
	keys := make(map[string]bool, len(c.pool.free))
	for k := range c.pool.free {
		keys[k] = true
	}
	for _, key := range sortedKeys(keys) {
		v := p.claimFreeValue(c, key)
		if v == "" {
			continue
		}
		out, placed := nc.Requirements[:0:0], false
		for _, r := range nc.Requirements {
			if r.Key != key {
				out = append(out, r)
			} else if !placed {
				out = append(out, req{Key: key, Operator: apiv1.OpIn, Values: []string{v}})
				placed = true
			}
		}
		nc.Requirements = out
		if nc.Labels == nil {
			nc.Labels = map[string]string{}
		}
		nc.Labels[key] = v
	}
}
