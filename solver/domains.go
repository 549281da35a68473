package solver

import (
	"fmt"
	"math/bits"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Topology domains over the label keys other than kubernetes.io/hostname.
//
// Key 0 is always topology.kubernetes.io/zone; the others are the keys the
// pods' spread and (anti-)affinity terms name, in the order first seen. A
// key's domains are its values. On a new node a value comes from the
// offering (zone, capacity type, region), the instance type (arch,
// family, size, ...) or the NodePool (karpenter.sh/nodepool, a template
// label, the values of an In requirement on a key nothing else sets, one of
// which each NodeClaim is given); on an existing node from its labels. A
// node that would not carry the key is in no domain of it.
const (
	maxKeys   = 8  // keys besides hostname one input tracks (zone included)
	maxValues = 64 // values per key (one bit each)
)

// keyVals holds one value index per key (-1: none, or not pinned yet).
type keyVals [maxKeys]int8

func noVals() keyVals {
	var v keyVals
	for i := range v {
		v[i] = -1
	}
	return v
}

// domKey is one topology key and its values (sorted).
type domKey struct {
	name   string
	values []string
	idx    map[string]int
}

// keyIndex returns the index of a topology key, registering it; false when
// maxKeys keys are already tracked.
func (p *prepared) keyIndex(name string) (int, bool) {
	for i, k := range p.keys {
		if k.name == name {
			return i, true
		}
	}
	if len(p.keys) >= maxKeys {
		return 0, false
	}
	p.keys = append(p.keys, &domKey{name: name})
	return len(p.keys) - 1, true
}

// indexKeys collects the values of every key but the zone (whose values
// prepareTopology indexed) over the pools' offerings and the existing
// nodes, and builds each pool's value masks and each node's values.
func (p *prepared) indexKeys() {
	for _, pl := range p.pools {
		pl.valMask = make([][][]uint64, len(p.keys))
		pl.valMask[0] = pl.zoneMask
	}
	p.nodeVals = make([]keyVals, len(p.nodes))
	for i := range p.nodes {
		p.nodeVals[i] = noVals()
		p.nodeVals[i][0] = int8(p.nodeZone[i])
	}
	for k := 1; k < len(p.keys); k++ {
		dk := p.keys[k]
		seen := map[string]bool{}
		for _, pl := range p.pools {
			for _, v := range pl.freeValues(dk.name) {
				seen[v] = true
			}
			for t := range pl.types {
				for o := range pl.types[t].offs {
					if v, ok := pl.valueOf(dk.name, t, o); ok {
						seen[v] = true
					}
				}
			}
		}
		for _, n := range p.nodes {
			if v, ok := n.Labels[dk.name]; ok {
				seen[v] = true
			}
		}
		dk.values = sortedKeys(seen)
		if len(dk.values) > maxValues {
			dk.values = dk.values[:maxValues]
		}
		dk.idx = make(map[string]int, len(dk.values))
		for i, v := range dk.values {
			dk.idx[v] = i
		}
		for _, pl := range p.pools {
			pl.valMask[k] = pl.valueMasks(dk)
		}
		for i, n := range p.nodes {
			if s, has := n.Labels[dk.name]; has {
				if v, ok := dk.idx[s]; ok {
					p.nodeVals[i][k] = int8(v)
				}
			}
		}
	}
}

// valueMasks is, per value of the key and per type, the offerings whose
// node carries that value. On a free key every offering can carry each
// value the pool allows: the NodeClaim is given one (claimFreeValue).
func (pl *poolInfo) valueMasks(dk *domKey) [][]uint64 {
	out := make([][]uint64, len(dk.values))
	for v := range out {
		out[v] = make([]uint64, len(pl.types))
	}
	for _, s := range pl.domainValues(dk) {
		if v, ok := dk.idx[s]; ok {
			for t := range pl.types {
				out[v][t] = allBits(len(pl.types[t].offs))
			}
		}
	}
	for t := range pl.types {
		for o := range pl.types[t].offs {
			if s, ok := pl.valueOf(dk.name, t, o); ok {
				if v, ok := dk.idx[s]; ok {
					out[v][t] |= 1 << uint(o)
				}
			}
		}
	}
	return out
}

// valueOf is the value of key on a node of offering o of type t.
func (pl *poolInfo) valueOf(key string, t, o int) (string, bool) {
	switch pl.kind(key) {
	case keyType:
		v, ok := pl.types[t].labels[key]
		return v, ok
	case keyOffering:
		return offeringValue(key, &pl.types[t].offs[o])
	case keyConst:
		return pl.constValue(key)
	}
	return "", false // a free key's values: freeValues
}

// valuesOf is the value set (bits) of key k over type t's offerings in mask.
func (pl *poolInfo) valuesOf(k int, t int32, mask uint64) uint64 {
	if k == 0 {
		return pl.zonesOf(t, mask)
	}
	var out uint64
	for v, vm := range pl.valMask[k] {
		if vm[t]&mask != 0 {
			out |= 1 << uint(v)
		}
	}
	return out
}

// pinMask is type t's offerings that carry every value pinned in pins.
func (pl *poolInfo) pinMask(pins *keyVals, t int32) uint64 {
	m := ^uint64(0)
	for k, v := range pins {
		if v >= 0 && k < len(pl.valMask) {
			m &= pl.valMask[k][v][t]
		}
	}
	return m
}

// pinMasks is, per type, the offerings carrying the values pinned for the
// keys in which: one key's value mask itself, several keys' ANDed.
func (pl *poolInfo) pinMasks(pins *keyVals, which uint16) []uint64 {
	var out []uint64
	for k := 0; which>>uint(k) != 0; k++ {
		if which&(1<<uint(k)) == 0 {
			continue
		}
		vm := pl.valMask[k][pins[k]]
		if out == nil {
			out = vm
			continue
		}
		and := make([]uint64, len(vm))
		for t := range and {
			and[t] = out[t] & vm[t]
		}
		out = and
	}
	return out
}

// allBits is the set of the first n values.
func allBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(n) - 1
}

// domView is what topoAt knows of a candidate's domains: an existing
// node's values, or a claim's (or new claim's) types and offerings.
type domView struct {
	fixed *keyVals
	c     *claim // nil for a new claim
	pl    *poolInfo
	ts    []int32
	ms    []uint64
}

// anyPin reports whether pins holds a value.
func anyPin(pins *keyVals) bool {
	for _, v := range pins {
		if v >= 0 {
			return true
		}
	}
	return false
}

// values is the candidate's possible values of key k once the values in
// pins (keys before k) are chosen.
func (v *domView) values(k int, pins *keyVals) uint64 {
	if v.fixed != nil {
		if x := v.fixed[k]; x >= 0 {
			return 1 << uint(x)
		}
		return 0
	}
	if v.c != nil {
		if x := v.c.pins[k]; x >= 0 {
			return 1 << uint(x)
		}
		if k == 0 {
			return v.c.zones()
		}
	}
	narrowed := anyPin(pins)
	var out uint64
	for i, t := range v.ts {
		m := v.ms[i]
		if narrowed {
			m &= v.pl.pinMask(pins, t)
		}
		if m != 0 {
			out |= v.pl.valuesOf(k, t, m)
		}
	}
	return out
}

// price is the candidate's price with value x of key k (tie-break between
// equally scored values): a claim's cheapest such offering, a new claim's
// first type (cheapest first) having one.
func (v *domView) price(k, x int, pins *keyVals) float64 {
	narrowed := anyPin(pins)
	if v.c != nil && k == 0 && !narrowed {
		return v.c.zonePrice(x)
	}
	best := -1.0
	for i, t := range v.ts {
		m := v.ms[i] & v.pl.valMask[k][x][t]
		if narrowed {
			m &= v.pl.pinMask(pins, t)
		}
		if m == 0 {
			continue
		}
		p := v.pl.types[t].cheapest(m)
		if v.c == nil {
			return p
		}
		if best < 0 || p < best {
			best = p
		}
	}
	return max(best, 0)
}

// narrowByPins keeps, in ts/ms (cheapest first), the offerings carrying
// the values pinned for the keys in which; false when nothing is left or
// minValues no longer holds.
func narrowByPins(pl *poolInfo, ts []int32, ms []uint64, pins *keyVals, which uint16) ([]int32, []uint64, bool) {
	if which == 0 {
		return ts, ms, true
	}
	pm := pl.pinMasks(pins, which)
	nt, nm := make([]int32, 0, len(ts)), make([]uint64, 0, len(ts))
	for i, t := range ts {
		if m := ms[i] & pm[t]; m != 0 {
			nt, nm = append(nt, t), append(nm, m)
		}
	}
	if len(nt) == 0 {
		return nil, nil, false
	}
	pl.sortByPrice(nt, nm)
	return nt, nm, minValuesHold(pl, nt, nm)
}

// lowest is the value among ok with the lowest score, the cheapest among
// equal scores (prices asked only for ties).
func lowest(ok uint64, score func(int) int32, price func(int) float64) int {
	best, bestScore, bestPrice := -1, int32(0), -1.0
	for m := ok; m != 0; m &= m - 1 {
		z := bits.TrailingZeros64(m)
		sc := score(z)
		switch {
		case best < 0 || sc < bestScore:
			best, bestScore, bestPrice = z, sc, -1
		case sc == bestScore:
			if bestPrice < 0 {
				bestPrice = price(best)
			}
			if pz := price(z); pz < bestPrice {
				best, bestPrice = z, pz
			}
		}
	}
	return best
}

// registerKeys gives every topology key the pods and existing pods name an
// index before any counter is made (zone first), and returns the keys
// beyond maxKeys, which the pods naming them are refused for.
func (p *prepared) registerKeys(in *Input) map[string]bool {
	p.keys = []*domKey{{name: apiv1.LabelZone}}
	over := map[string]bool{}
	reg := func(key string) {
		if key == apiv1.LabelHostname || key == "" {
			return
		}
		if _, ok := p.keyIndex(key); !ok {
			over[key] = true
		}
	}
	terms := func(pod *Pod) {
		for _, c := range pod.TopologySpread {
			reg(c.TopologyKey)
		}
		for _, t := range affinityTerms(pod) {
			reg(t.TopologyKey)
		}
	}
	for i := range in.Pods {
		terms(&in.Pods[i])
	}
	for _, ep := range p.existing {
		if a := ep.Pod.PodAntiAffinity; a != nil {
			for _, t := range a.RequiredDuringSchedulingIgnoredDuringExecution {
				reg(t.TopologyKey)
			}
		}
	}
	return over
}

// overKeys is why a pod naming a topology key beyond maxKeys is refused
// ("" when it names none).
func overKeys(pod *Pod, over map[string]bool) string {
	if len(over) == 0 {
		return ""
	}
	var named []string
	for _, c := range pod.TopologySpread {
		if over[c.TopologyKey] {
			named = append(named, c.TopologyKey)
		}
	}
	for _, t := range affinityTerms(pod) {
		if over[t.TopologyKey] {
			named = append(named, t.TopologyKey)
		}
	}
	if len(named) == 0 {
		return ""
	}
	return fmt.Sprintf("topology key %s: the input names more than %d distinct topology keys besides %s", named[0], maxKeys, apiv1.LabelHostname)
}

// affinityTerms lists every pod (anti-)affinity term of the pod, required
// and preferred.
func affinityTerms(pod *Pod) []*corev1.PodAffinityTerm {
	var out []*corev1.PodAffinityTerm
	add := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		for i := range req {
			out = append(out, &req[i])
		}
		for i := range pref {
			out = append(out, &pref[i].PodAffinityTerm)
		}
	}
	if a := pod.PodAffinity; a != nil {
		add(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a := pod.PodAntiAffinity; a != nil {
		add(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return out
}
