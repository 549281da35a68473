package solver

import (
	"math/bits"
	"sort"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Topology: topology spread constraints and pod (anti-)affinity on
// kubernetes.io/hostname and on any other key (domains.go).
//
// A counter counts, per domain (a value of its key, e.g. a zone or a
// capacity type, or for hostname a node: an existing node or a NodeClaim
// of the plan), the pods matching one label selector in a set of
// namespaces: existing pods (Input.ExistingPods) and the pods the plan has
// placed so far. Constraints of several kinds and pods share one counter
// when selector, namespaces and key are equal (100 replicas with self
// anti-affinity share one counter).
//
// Rules (Karpenter's scheduling simulation, pkg/controllers/provisioning/scheduling/topology*.go):
//   - spread: a domain d is allowed when count(d) + self − min ≤ maxSkew,
//     where self is 1 if the pod matches its own selector and min is the
//     lowest count over the eligible domains (0 when fewer than minDomains
//     are eligible). For hostname, min is 0: a new node can always be made.
//     Eligible domains are the values of the offerings the pod's node
//     affinity admits in any NodePool, plus the values of existing nodes
//     it admits (nodeAffinityPolicy Honor; Ignore: every pool's and node's
//     values), leaving out pools and nodes whose taints the pod does not
//     tolerate under nodeTaintsPolicy Honor (default Ignore).
//   - affinity: only domains with count > 0; when no matching pod exists
//     anywhere and the pod matches its own selector, any domain (bootstrap).
//   - anti-affinity: only domains with count 0; and, inversely, a pod
//     matching the selector of a pod's anti-affinity term never goes into a
//     domain holding that pod (existing pods included).
//
// A NodeClaim holding a pod that a counter of key k counts is pinned to
// one value of k (its offerings narrow to those carrying it), so every
// count is exact.
const (
	topoSpread = iota
	topoAffinity
	topoAnti
)

// A counter's key is domHost or the index of a key in prepared.keys
// (domZone, 0, is topology.kubernetes.io/zone).
const (
	domZone = 0
	domHost = -1
)

// maxZones is how many distinct zones topology tracks (one bit each).
const maxZones = maxValues

type counter struct {
	id    int
	key   int // domHost or a key index
	name  string
	sel   labels.Selector
	ns    []string
	nsSel labels.Selector // a term's namespaceSelector (nil: none)
	nsl   map[string]map[string]string
	anti  bool // some pod owns an anti-affinity term on it
}

// matches reports whether the counter counts a pod: in one of its
// namespaces or one its namespace selector selects, with matching labels.
func (c *counter) matches(ns string, l map[string]string) bool {
	if !contains(c.ns, ns) && (c.nsSel == nil || !c.nsSel.Matches(namespaceLabels(c.nsl, ns))) {
		return false
	}
	return c.sel.Matches(labels.Set(l))
}

// namespaceLabels are a namespace's labels: Input.NamespaceLabels', else
// the one the API server sets on every namespace.
func namespaceLabels(nsl map[string]map[string]string, ns string) labels.Set {
	if l, ok := nsl[ns]; ok {
		return l
	}
	return labels.Set{corev1.LabelMetadataName: ns}
}

// constraint is one topology rule of a pod (at one relaxation level).
type constraint struct {
	kind       int
	ctr        *counter
	maxSkew    int32
	minDomains int32
	self       bool
	pref       bool // a preference: its anti-affinity does not repel other pods
	policy     uint8
}

// A spread's node inclusion policies (which nodes' domains count).
const (
	ignoreAffinity uint8 = 1 << iota // nodeAffinityPolicy: Ignore
	honorTaints                      // nodeTaintsPolicy: Honor
)

func inclusionPolicy(t *corev1.TopologySpreadConstraint) uint8 {
	var p uint8
	if t.NodeAffinityPolicy != nil && *t.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore {
		p |= ignoreAffinity
	}
	if t.NodeTaintsPolicy != nil && *t.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		p |= honorTaints
	}
	return p
}

func (c *constraint) String() string {
	kind := [...]string{"spread", "affinity", "anti-affinity"}[c.kind]
	s := "pod " + kind + " on " + c.ctr.name + " (" + c.ctr.sel.String()
	if c.kind == topoSpread {
		s += " maxSkew " + strconv.Itoa(int(c.maxSkew))
	}
	return s + ")"
}

// topoKey is the counter key of a topology key (false: beyond maxKeys,
// and the pod is refused: see overKeys).
func (p *prepared) topoKey(k string) (int, bool) {
	if k == apiv1.LabelHostname {
		return domHost, true
	}
	for i, dk := range p.keys {
		if dk.name == k {
			return i, true
		}
	}
	return 0, false
}

// counterFor returns the shared counter for a selector, namespaces and key.
func (p *prepared) counterFor(key int, sel, nsSel labels.Selector, ns []string) *counter {
	ns = append([]string(nil), ns...)
	sort.Strings(ns)
	nsKey := "-"
	if nsSel != nil {
		nsKey = selString(nsSel)
	}
	k := strconv.Itoa(key) + "|" + nsKey + "|" + strings.Join(ns, ",") + "|" + selString(sel)
	if c, ok := p.counters[k]; ok {
		return c
	}
	name := apiv1.LabelHostname
	if key != domHost {
		name = p.keys[key].name
	}
	c := &counter{id: len(p.ctrList), key: key, name: name, sel: sel, nsSel: nsSel, nsl: p.nsLabels, ns: ns}
	p.counters[k] = c
	p.ctrList = append(p.ctrList, c)
	return c
}

func selString(s labels.Selector) string {
	if s.Empty() {
		if _, ok := s.Requirements(); !ok {
			return "<nothing>"
		}
		return "<everything>"
	}
	return s.String()
}

// selectorOf converts a label selector (nil selects nothing) and adds
// matchLabelKeys with the pod's own values.
func selectorOf(ls *metav1.LabelSelector, matchLabelKeys []string, podLabels map[string]string) labels.Selector {
	if ls == nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return labels.Nothing()
	}
	for _, k := range matchLabelKeys {
		v, ok := podLabels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err == nil {
			sel = sel.Add(*r)
		}
	}
	return sel
}

// affinityCounter builds the counter of a pod (anti-)affinity term: the
// union of the term's namespaces and those its namespaceSelector selects
// (an empty one: all), the pod's own namespace when it has neither.
func (p *prepared) affinityCounter(pod *Pod, t *corev1.PodAffinityTerm) *counter {
	key, ok := p.topoKey(t.TopologyKey)
	if !ok {
		return nil
	}
	ns := t.Namespaces
	var nsSel labels.Selector
	if t.NamespaceSelector != nil {
		var err error
		if nsSel, err = metav1.LabelSelectorAsSelector(t.NamespaceSelector); err != nil {
			nsSel = labels.Nothing()
		}
	}
	if len(ns) == 0 && nsSel == nil {
		ns = []string{pod.Namespace}
	}
	return p.counterFor(key, selectorOf(t.LabelSelector, t.MatchLabelKeys, pod.Labels), nsSel, ns)
}

// preference is one relaxable preference of a pod, in Karpenter's
// relaxation order: preferred pod affinity (heaviest first), preferred pod
// anti-affinity (heaviest first), preferred node affinity (heaviest first),
// ScheduleAnyway spreads, then toleration of PreferNoSchedule taints.
type preference struct {
	kind   int // prefPodAff, prefPodAnti, prefNode, prefSpread, prefPNS
	weight int32
	term   *corev1.PodAffinityTerm
	node   []req
	spread *corev1.TopologySpreadConstraint
}

const (
	prefPodAff = iota
	prefPodAnti
	prefNode
	prefSpread
	prefPNS
)

func weighted(pw []corev1.WeightedPodAffinityTerm, kind int) []preference {
	out := make([]preference, 0, len(pw))
	for i := range pw {
		out = append(out, preference{kind: kind, weight: pw[i].Weight, term: &pw[i].PodAffinityTerm})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].weight > out[j].weight })
	return out
}

// levels returns the pod's relaxation levels: level 0 honours every
// preference as a requirement; level k has dropped the first k preferences.
func (p *prepared) levels(pod *Pod) []*podSignature {
	var prefs []preference
	if a := pod.PodAffinity; a != nil {
		prefs = append(prefs, weighted(a.PreferredDuringSchedulingIgnoredDuringExecution, prefPodAff)...)
	}
	if a := pod.PodAntiAffinity; a != nil {
		prefs = append(prefs, weighted(a.PreferredDuringSchedulingIgnoredDuringExecution, prefPodAnti)...)
	}
	var nodePrefs []preference
	for _, w := range pod.PreferredAffinity {
		nodePrefs = append(nodePrefs, preference{kind: prefNode, weight: w.Weight, node: w.Requirements})
	}
	sort.SliceStable(nodePrefs, func(i, j int) bool { return nodePrefs[i].weight > nodePrefs[j].weight })
	prefs = append(prefs, nodePrefs...)
	for i := range pod.TopologySpread {
		if pod.TopologySpread[i].WhenUnsatisfiable == corev1.ScheduleAnyway {
			prefs = append(prefs, preference{kind: prefSpread, spread: &pod.TopologySpread[i]})
		}
	}
	if p.preferNoSchedule {
		prefs = append(prefs, preference{kind: prefPNS})
	}
	out := make([]*podSignature, 0, len(prefs)+1)
	for k := 0; k <= len(prefs); k++ {
		out = append(out, p.levelSig(pod, prefs[k:]))
	}
	return out
}

// levelSig builds the signature of the pod with the given preferences still
// honoured (as requirements).
func (p *prepared) levelSig(pod *Pod, prefs []preference) *podSignature {
	lp := *pod
	strictPNS := false
	var nodePref []req
	var cons []*constraint
	pref := false
	addCons := func(kind int, c *counter, skew, minDom int32, policy uint8) {
		if c == nil {
			return
		}
		if kind == topoAnti && !pref {
			c.anti = true
		}
		cons = append(cons, &constraint{kind: kind, ctr: c, maxSkew: skew, minDomains: minDom, pref: pref, policy: policy})
	}
	spread := func(t *corev1.TopologySpreadConstraint) {
		key, ok := p.topoKey(t.TopologyKey)
		if !ok {
			return
		}
		md := int32(1)
		if t.MinDomains != nil {
			md = *t.MinDomains
		}
		addCons(topoSpread, p.counterFor(key, selectorOf(t.LabelSelector, t.MatchLabelKeys, pod.Labels), nil, []string{pod.Namespace}), max(t.MaxSkew, 1), md, inclusionPolicy(t))
	}
	for i := range pod.TopologySpread {
		if pod.TopologySpread[i].WhenUnsatisfiable != corev1.ScheduleAnyway {
			spread(&pod.TopologySpread[i])
		}
	}
	if a := pod.PodAffinity; a != nil {
		for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
			addCons(topoAffinity, p.affinityCounter(pod, &a.RequiredDuringSchedulingIgnoredDuringExecution[i]), 0, 0, 0)
		}
	}
	if a := pod.PodAntiAffinity; a != nil {
		for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
			addCons(topoAnti, p.affinityCounter(pod, &a.RequiredDuringSchedulingIgnoredDuringExecution[i]), 0, 0, 0)
		}
	}
	pref = true
	for _, pr := range prefs {
		switch pr.kind {
		case prefPodAff:
			addCons(topoAffinity, p.affinityCounter(pod, pr.term), 0, 0, 0)
		case prefPodAnti:
			addCons(topoAnti, p.affinityCounter(pod, pr.term), 0, 0, 0)
		case prefNode:
			if nodePref == nil {
				nodePref = pr.node // the heaviest remaining term
				if nodePref == nil {
					nodePref = []req{}
				}
			}
		case prefSpread:
			spread(pr.spread)
		case prefPNS:
			strictPNS = true
		}
	}
	lp.RequiredAffinity = withExtra(pod.RequiredAffinity, nil, nodePref)
	if len(pod.VolumeRequirements) == 0 {
		return p.signature(&lp, strictPNS, cons, nil)
	}
	// The volumes constrain the node, not the domains topology spread
	// counts (kube-scheduler: the pod's own node affinity): the signature
	// without them says which zones are eligible.
	domains := p.signature(&lp, strictPNS, nil, nil)
	lv := *pod
	lv.RequiredAffinity = withExtra(pod.RequiredAffinity, pod.VolumeRequirements, nodePref)
	return p.signature(&lv, strictPNS, cons, domains)
}

// withExtra ANDs each ORed affinity term (none: one term of no
// requirements) with each volume alternative (none: one of nothing) and the
// preferred requirements; an empty required term matches nothing and stays
// so. It returns terms itself when there is nothing to add.
func withExtra(terms, vol [][]req, pref []req) [][]req {
	if len(vol) == 0 && len(pref) == 0 {
		return terms
	}
	if len(vol) == 0 {
		vol = [][]req{nil}
	}
	base := terms
	if len(base) == 0 {
		base = [][]req{nil}
	}
	out := make([][]req, 0, len(base)*len(vol))
	for _, t := range base {
		if len(terms) > 0 && len(t) == 0 {
			out = append(out, nil)
			continue
		}
		for _, v := range vol {
			out = append(out, append(append(append(make([]req, 0, len(t)+len(v)+len(pref)), t...), v...), pref...))
		}
	}
	return out
}

// podTopo is what a pod contributes to counting.
type podTopo struct {
	matches   []*counter // counters that count this pod
	antiMatch []*counter // of those, the ones some pod's anti-affinity owns
	pinKeys   uint16     // keys whose counters count it (its node's value must be known)
}

// topoState is the per-pass topology bookkeeping.
type topoState struct {
	zc    [][]int32 // per counter: pods per value of its key
	hc    [][]int32 // per counter: pods per host domain
	total []int32   // per counter: pods in any domain
	zo    []uint64  // per counter: values holding an owner of an anti-affinity term on it
	ho    [][]int32 // per counter: owners per host domain
}

func (t *topoState) clone() topoState {
	out := topoState{total: append([]int32(nil), t.total...), zo: append([]uint64(nil), t.zo...)}
	cp := func(in [][]int32) [][]int32 {
		o := make([][]int32, len(in))
		for i := range in {
			o[i] = append([]int32(nil), in[i]...)
		}
		return o
	}
	out.zc, out.hc, out.ho = cp(t.zc), cp(t.hc), cp(t.ho)
	return out
}

func get(s []int32, i int32) int32 {
	if int(i) < len(s) && i >= 0 {
		return s[i]
	}
	return 0
}

func inc(s *[]int32, i int32) {
	if i < 0 {
		return
	}
	for int(i) >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[i]++
}

// record counts a pod placed in host domain host with the key values vals
// (−1 unknown).
func (t *topoState) record(pt *podTopo, sig *podSignature, host int32, vals *keyVals) {
	for _, c := range pt.matches {
		t.total[c.id]++
		if c.key == domHost {
			inc(&t.hc[c.id], host)
		} else if v := vals[c.key]; v >= 0 {
			t.zc[c.id][v]++
		}
	}
	if sig == nil {
		return
	}
	for _, c := range sig.cons {
		if c.kind != topoAnti || c.pref {
			continue
		}
		if c.ctr.key == domHost {
			inc(&t.ho[c.ctr.id], host)
		} else if v := vals[c.ctr.key]; v >= 0 {
			t.zo[c.ctr.id] |= 1 << uint(v)
		}
	}
}

// topoPod is the topology verdict for one pod at one level, computed once
// before its candidates are scanned (counts do not change during a scan).
type topoPod struct {
	active  bool   // the pod has constraints or is counted
	need    uint16 // keys the candidate must end up with one value of
	cons    uint16 // keys of own constraints (a node without the key cannot take it)
	allowed [maxKeys]uint64
	scored  uint16 // keys whose score row is set (others score 0)
	// narrow is, after topoAt, the keys it pinned among several values
	// the candidate could take: its offerings must narrow to the pin.
	narrow uint16
	score  [maxKeys][maxValues]int32
}

func (tp *topoPod) scoreOf(k, v int) int32 {
	if tp.scored&(1<<uint(k)) == 0 {
		return 0
	}
	return tp.score[k][v]
}

// prepTopo computes the domain verdict of pi at level sig.
func (s *pass) prepTopo(pi *podInfo, sig *podSignature) {
	tp := &s.tp
	tp.active = len(sig.cons) > 0 || len(pi.topo.matches) > 0
	if !tp.active {
		return
	}
	t := &s.topo
	tp.need, tp.cons, tp.scored = pi.topo.pinKeys, 0, 0
	for k, dk := range s.p.keys {
		tp.allowed[k] = allBits(len(dk.values))
	}
	for _, c := range sig.cons {
		k := c.ctr.key
		if k == domHost {
			continue
		}
		bit := uint16(1) << uint(k)
		tp.cons, tp.need = tp.cons|bit, tp.need|bit
		if tp.scored&bit == 0 {
			tp.score[k], tp.scored = [maxValues]int32{}, tp.scored|bit
		}
		tp.allowed[k] &= s.allowedValues(c, sig, t.zc[c.ctr.id], t.total[c.ctr.id], &tp.score[k])
	}
	for _, c := range pi.topo.antiMatch {
		if c.key != domHost {
			tp.allowed[c.key] &^= t.zo[c.id]
		}
	}
}

// allowedValues is the set of values of the constraint's key that its
// counts allow (adding a spread's counts to score).
func (s *pass) allowedValues(c *constraint, sig *podSignature, zc []int32, total int32, score *[maxValues]int32) uint64 {
	nv := len(zc)
	var m uint64
	switch c.kind {
	case topoSpread:
		self := int32(0)
		if c.self {
			self = 1
		}
		elig := s.p.eligible(sig, c.ctr.key, c.policy)
		lo := int32(-1)
		for z := 0; z < nv; z++ {
			if elig&(1<<uint(z)) != 0 && (lo < 0 || zc[z] < lo) {
				lo = zc[z]
			}
		}
		if lo < 0 || int32(bits.OnesCount64(elig)) < c.minDomains {
			lo = 0
		}
		for z := 0; z < nv; z++ {
			if elig&(1<<uint(z)) != 0 && zc[z]+self-lo <= c.maxSkew {
				m |= 1 << uint(z)
			}
			score[z] += zc[z]
		}
	case topoAffinity:
		if total == 0 && c.self {
			return allBits(nv)
		}
		for z := 0; z < nv; z++ {
			if zc[z] > 0 {
				m |= 1 << uint(z)
			}
		}
	case topoAnti:
		for z := 0; z < nv; z++ {
			if zc[z] == 0 {
				m |= 1 << uint(z)
			}
		}
	}
	return m
}

// topoAt checks a candidate: its host domain and the domains it may still
// be in (v). It returns the value to pin per key (−1: leave as is) and
// whether the pod may go.
func (s *pass) topoAt(pi *podInfo, sig *podSignature, host int32, v *domView) (keyVals, bool) {
	pins := noVals()
	tp := &s.tp
	tp.narrow = 0
	if !tp.active {
		return pins, true
	}
	if !s.hostOK(pi, sig, host) {
		return pins, false
	}
	for k := 0; k < len(s.p.keys) && tp.need>>uint(k) != 0; k++ {
		if tp.need&(1<<uint(k)) == 0 {
			continue
		}
		vals := v.values(k, &pins)
		if vals == 0 { // a node without the key's label
			if tp.cons&(1<<uint(k)) != 0 {
				return pins, false
			}
			continue
		}
		ok := vals & tp.allowed[k]
		if ok == 0 {
			return pins, false
		}
		if bits.OnesCount64(vals) > 1 {
			tp.narrow |= 1 << uint(k)
		}
		if bits.OnesCount64(ok) == 1 {
			pins[k] = int8(bits.TrailingZeros64(ok))
			continue
		}
		kk := k
		pins[k] = int8(lowest(ok, func(x int) int32 { return tp.scoreOf(kk, x) }, func(x int) float64 { return v.price(kk, x, &pins) }))
	}
	return pins, true
}

// hostOK checks the pod's hostname constraints and the inverse
// anti-affinity of placed pods in host domain host.
func (s *pass) hostOK(pi *podInfo, sig *podSignature, host int32) bool {
	t := &s.topo
	for _, c := range sig.cons {
		if c.ctr.key != domHost {
			continue
		}
		n := get(t.hc[c.ctr.id], host)
		switch c.kind {
		case topoSpread:
			self := int32(0)
			if c.self {
				self = 1
			}
			if n+self > c.maxSkew {
				return false
			}
		case topoAffinity:
			if n == 0 && !(t.total[c.ctr.id] == 0 && c.self) {
				return false
			}
		case topoAnti:
			if n > 0 {
				return false
			}
		}
	}
	for _, c := range pi.topo.antiMatch {
		if c.key == domHost && get(t.ho[c.id], host) > 0 {
			return false
		}
	}
	return true
}

// eligible is the set of values of key k that count for a spread of the
// pod under the inclusion policy (cached per signature).
func (p *prepared) eligible(sig *podSignature, k int, policy uint8) uint64 {
	slot := uint(k)*4 + uint(policy)
	if sig.eligibleDone&(1<<slot) != 0 {
		return sig.eligible[slot]
	}
	var m uint64
	if sig.domains != nil {
		m = p.eligible(sig.domains, k, policy)
	} else {
		m = p.eligibleOf(sig, k, policy)
	}
	sig.eligible[slot], sig.eligibleDone = m, sig.eligibleDone|1<<slot
	return m
}

func (p *prepared) eligibleOf(sig *podSignature, k int, policy uint8) uint64 {
	var m uint64
	for _, pl := range p.pools {
		sp := sig.forPool(pl)
		if policy&honorTaints != 0 && sp.taint != nil {
			continue
		}
		if policy&ignoreAffinity != 0 {
			for t := range pl.types {
				m |= pl.valuesOf(k, int32(t), pl.base[t])
			}
			continue
		}
		for _, c := range sp.terms {
			for _, t := range c.byPrice {
				m |= pl.valuesOf(k, t, c.masks[t])
			}
		}
	}
	for i, n := range p.nodes {
		x := p.nodeVals[i][k]
		if x < 0 {
			continue
		}
		if policy&honorTaints != 0 && untolerated(n.Taints, sig.tolerations, false) != nil {
			continue
		}
		if policy&ignoreAffinity != 0 || sig.matchesLabels(n.Labels) {
			m |= 1 << uint(x)
		}
	}
	return m
}

// zonesOf is the zone set (bits) of type t's offerings in mask.
func (pl *poolInfo) zonesOf(t int32, mask uint64) uint64 {
	var out uint64
	for m := mask; m != 0; m &= m - 1 {
		if z := pl.offZone[t][bits.TrailingZeros64(m)]; z >= 0 {
			out |= 1 << uint(z)
		}
	}
	return out
}

// prepareTopology indexes zones and host domains, builds the counters of
// existing pods' anti-affinity, and counts existing pods.
func (p *prepared) prepareTopology(in *Input) {
	zoneSet := map[string]bool{}
	for _, pl := range p.pools {
		for t := range pl.types {
			for _, o := range pl.types[t].offs {
				if o.Zone != "" {
					zoneSet[o.Zone] = true
				}
			}
		}
	}
	for _, n := range p.nodes {
		if z := n.Labels[apiv1.LabelZone]; z != "" {
			zoneSet[z] = true
		}
	}
	for _, ep := range p.existing {
		if z := ep.Zone; z != "" {
			zoneSet[z] = true
		}
	}
	p.zones = sortedKeys(zoneSet)
	if len(p.zones) > maxZones {
		p.zones = p.zones[:maxZones]
	}
	p.zoneIdx = map[string]int{}
	for i, z := range p.zones {
		p.zoneIdx[z] = i
	}
	p.overKeys = p.registerKeys(in)
	p.keys[0].values, p.keys[0].idx = p.zones, p.zoneIdx
	zoneOf := func(z string) int {
		if i, ok := p.zoneIdx[z]; ok {
			return i
		}
		return -1
	}
	for _, pl := range p.pools {
		pl.offZone = make([][]int8, len(pl.types))
		pl.zoneMask = make([][]uint64, len(p.zones))
		for z := range p.zones {
			pl.zoneMask[z] = make([]uint64, len(pl.types))
		}
		for t := range pl.types {
			pl.offZone[t] = make([]int8, len(pl.types[t].offs))
			for o, of := range pl.types[t].offs {
				z := zoneOf(of.Zone)
				pl.offZone[t][o] = int8(z)
				if z >= 0 {
					pl.zoneMask[z][t] |= 1 << uint(o)
				}
			}
		}
	}
	p.hostIdx = map[string]int32{}
	p.nodeZone = make([]int, len(p.nodes))
	for i, n := range p.nodes {
		p.hostIdx[n.Name] = int32(i)
		p.nodeZone[i] = zoneOf(n.Labels[apiv1.LabelZone])
	}
	for _, ep := range p.existing {
		if _, ok := p.hostIdx[ep.Node]; !ok && ep.Node != "" {
			p.hostIdx[ep.Node] = int32(len(p.hostIdx))
		}
	}
	p.hostBase = int32(len(p.hostIdx))
	// Existing pods' required anti-affinity terms keep matching pods out.
	type owned struct {
		ep  *ExistingPod
		ctr []*counter
	}
	var owners []owned
	for _, ep := range p.existing {
		if a := ep.Pod.PodAntiAffinity; a != nil {
			var cs []*counter
			for j := range a.RequiredDuringSchedulingIgnoredDuringExecution {
				if c := p.affinityCounter(&ep.Pod, &a.RequiredDuringSchedulingIgnoredDuringExecution[j]); c != nil {
					c.anti = true
					cs = append(cs, c)
				}
			}
			owners = append(owners, owned{ep, cs})
		}
	}
	p.ownersLater = func(t *topoState) {
		for _, o := range owners {
			host := p.hostIdx[o.ep.Node]
			vals := p.existingVals(o.ep)
			for _, c := range o.ctr {
				if c.key == domHost {
					inc(&t.ho[c.id], host)
				} else if v := vals[c.key]; v >= 0 {
					t.zo[c.id] |= 1 << uint(v)
				}
			}
		}
	}
}

// finishTopology runs once every counter exists: it computes which counters
// count each pending pod and counts the existing pods into the base state.
func (p *prepared) finishTopology(in *Input) {
	p.indexKeys()
	n := len(p.ctrList)
	t := topoState{zc: make([][]int32, n), hc: make([][]int32, n), total: make([]int32, n), zo: make([]uint64, n), ho: make([][]int32, n)}
	for i, c := range p.ctrList {
		if c.key == domHost {
			t.hc[i] = make([]int32, p.hostBase)
		} else {
			t.zc[i] = make([]int32, len(p.keys[c.key].values))
		}
	}
	cache := map[string]*podTopo{}
	topoOf := func(pod *Pod) *podTopo {
		if n == 0 {
			return &podTopo{}
		}
		k := labelKey(pod.Namespace, pod.Labels)
		if pt, ok := cache[k]; ok {
			return pt
		}
		pt := &podTopo{}
		for _, c := range p.ctrList {
			if c.matches(pod.Namespace, pod.Labels) {
				pt.matches = append(pt.matches, c)
				if c.anti {
					pt.antiMatch = append(pt.antiMatch, c)
				}
				if c.key != domHost {
					pt.pinKeys |= 1 << uint(c.key)
				}
			}
		}
		cache[k] = pt
		return pt
	}
	for _, pi := range p.pods {
		pi.topo = topoOf(pi.pod)
		for _, sig := range pi.levels {
			for _, c := range sig.cons {
				c.self = c.ctr.matches(pi.pod.Namespace, pi.pod.Labels)
			}
		}
	}
	for _, ep := range p.existing {
		host := int32(-1)
		if h, ok := p.hostIdx[ep.Node]; ok {
			host = h
		}
		vals := p.existingVals(ep)
		t.record(topoOf(&ep.Pod), nil, host, &vals)
	}
	p.ownersLater(&t)
	p.baseTopo = t
}

// existingVals are the key values of an existing pod's node: its labels
// when the node is an input node, else only the pod's zone.
func (p *prepared) existingVals(ep *ExistingPod) keyVals {
	if h, ok := p.hostIdx[ep.Node]; ok && int(h) < len(p.nodeVals) {
		return p.nodeVals[h]
	}
	vals := noVals()
	if i, ok := p.zoneIdx[ep.Zone]; ok {
		vals[0] = int8(i)
	}
	return vals
}

func labelKey(ns string, l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(ns)
	for _, k := range keys {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
	}
	return b.String()
}

// Host ports.

func normPorts(ps []HostPort) []HostPort {
	out := make([]HostPort, 0, len(ps))
	for _, hp := range ps {
		if hp.Port <= 0 {
			continue
		}
		if hp.Protocol == "" {
			hp.Protocol = "TCP"
		}
		if hp.IP == "0.0.0.0" || hp.IP == "::" {
			hp.IP = ""
		}
		out = append(out, hp)
	}
	return out
}

// portsConflict reports whether any port of a conflicts with one of b.
func portsConflict(a, b []HostPort) (HostPort, bool) {
	for _, x := range a {
		for _, y := range b {
			if x.Port == y.Port && x.Protocol == y.Protocol && (x.IP == "" || y.IP == "" || x.IP == y.IP) {
				return x, true
			}
		}
	}
	return HostPort{}, false
}

func portString(hp HostPort) string {
	return strconv.Itoa(int(hp.Port)) + "/" + hp.Protocol
}
