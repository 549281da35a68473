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
// In [that value], which labels its node. A key the pool names no In value
// of (Exists, NotIn, integer bounds) adds no domain; its NodeClaims take
// the value topology pins, else their pods', else a generated integer
// (freegen.go).

// freeValues is the values a NodeClaim of the pool may be given on a free
// key: those of its In requirements on the key that all its requirements
// on the key admit, sorted (none for a key with no In requirement: Exists
// or NotIn alone name no domain).
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

// domainValues is the domains of dk a NodeClaim of the pool can be pinned
// to: the pool's In values on a free key (freeValues); on a free key it
// names no In value of (Exists, NotIn, integer bounds), every known value
// of the key (existing nodes', other pools') its requirements admit, as
// Karpenter's topology pins such a claim to any domain its requirement
// has. Such a pool adds no domain itself (indexKeys reads freeValues).
func (pl *poolInfo) domainValues(dk *domKey) []string {
	if pl.kind(dk.name) != keyFree {
		return nil
	}
	rs := pl.free[dk.name]
	for _, r := range rs {
		if r.Operator == apiv1.OpIn {
			return pl.freeValues(dk.name)
		}
	}
	var out []string
	for _, v := range dk.values {
		if admitsAll(rs, v) {
			out = append(out, v)
		}
	}
	return out
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
// its pool, as Karpenter resolves a custom key's label from the claim's
// requirements (the pool's intersected with its pods'): the pinned value,
// else the first value of the pool's In requirements the claim's admit,
// else the first value of the pods' In requirements that all admit. A key
// whose requirements name no value it could take (Exists, NotIn, Gt, Lt,
// Gte, Lte) is given a generated integer (generated true), where Karpenter
// draws a random one; DoesNotExist gives none ("").
func (p *prepared) claimFreeValue(c *claim, key string) (v string, generated bool) {
	for k := 1; k < len(p.keys); k++ {
		if p.keys[k].name == key && c.pins[k] >= 0 {
			return p.keys[k].values[c.pins[k]], false
		}
	}
	all := append([]req(nil), c.pool.free[key]...)
	asked := false
	for _, r := range c.free {
		if r.Key == key {
			all, asked = append(all, r), true
		}
	}
	if c.pool.np.OptionalFreeKeys[key] && !asked {
		return "", false
	}
	named := false
	for _, list := range [][]req{c.pool.free[key], all} {
		for _, r := range list {
			if r.Operator != apiv1.OpIn {
				continue
			}
			named = true
			if v := firstAdmitted(all, r.Values); v != "" {
				return v, false
			}
		}
		if named {
			return "", false
		}
	}
	for _, r := range all {
		if r.Operator == apiv1.OpDoesNotExist {
			return "", false
		}
	}
	v = generatedValue(all, c.seed(key))
	return v, v != ""
}

// firstAdmitted is the first of values, in sort order, that every
// requirement in reqs admits ("" if none).
func firstAdmitted(reqs []req, values []string) string {
	best := ""
	for _, v := range values {
		if (best == "" || v < best) && admitsAll(reqs, v) {
			best = v
		}
	}
	return best
}

// giveFreeValues labels the NodeClaim with the value it is given on each
// free key of its pool, as Karpenter labels a NodeClaim with the values of
// its custom requirements. A value from In requirements also narrows the
// claim's requirements on the key to In [that value], in place of the first
// (the others on it are dropped: the value meets them); a generated value
// leaves them as they are, as Karpenter's do.
func (p *prepared) giveFreeValues(c *claim, nc *NewNodeClaim) {
	keys := make(map[string]bool, len(c.pool.free))
	for k := range c.pool.free {
		keys[k] = true
	}
	for _, key := range sortedKeys(keys) {
		v, generated := p.claimFreeValue(c, key)
		if v == "" {
			continue
		}
		if !generated {
			nc.Requirements = narrowTo(nc.Requirements, key, v)
		}
		if nc.Labels == nil {
			nc.Labels = map[string]string{}
		}
		nc.Labels[key] = v
	}
}

// narrowTo replaces the first requirement on key with In [v] and drops the
// others on it.
func narrowTo(reqs []req, key, v string) []req {
	out, placed := reqs[:0:0], false
	for _, r := range reqs {
		if r.Key != key {
			out = append(out, r)
		} else if !placed {
			out = append(out, req{Key: key, Operator: apiv1.OpIn, Values: []string{v}})
			placed = true
		}
	}
	if !placed {
		out = append(out, req{Key: key, Operator: apiv1.OpIn, Values: []string{v}})
	}
	return out
}
