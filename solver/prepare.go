package solver

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

type req = apiv1.NodeSelectorRequirementWithMinValues

// maxOfferings is how many offerings of one instance type the solver
// considers (one bit each in an offering mask); later ones are ignored.
const maxOfferings = 64

// prepared is everything the packing passes read and never write: sorted
// pods, pools and nodes, per-type node shapes after daemonset overhead, and
// the cache of compiled scheduling constraints (one per distinct pod
// signature), which is filled lazily and shared by all passes.
type prepared struct {
	classes int // number of pod packing classes
	pods    []*podInfo
	pools   []*poolInfo
	nodes   []*Node
	// existing are the input's ExistingPods (in order; a RemovalSimulator
	// passes the ones off its candidates without copying them).
	existing []*ExistingPod
	sigs     map[string]*podSignature // lookups only, never iterated
	opens    map[openKey]*candidates
	// maxVCPU is the largest vCPU count of any instance type of any pool.
	maxVCPU int
	// maxUsable is the element-wise largest usable shape of any type of any pool.
	maxUsable resources.List

	// Topology (topology.go): counters by key, zones and host domains
	// (existing nodes first, in p.nodes order, then other nodes of
	// existing pods; NodeClaims follow from hostBase by creation order).
	counters map[string]*counter
	ctrList  []*counter
	zones    []string
	zoneIdx  map[string]int
	hostIdx  map[string]int32
	hostBase int32
	nodeZone []int // per p.nodes entry, -1 when unknown
	// keys are the topology keys besides hostname (zone first) and
	// nodeVals each node's values of them (domains.go); overKeys the keys
	// beyond maxKeys.
	keys             []*domKey
	nodeVals         []keyVals
	overKeys         map[string]bool
	nsLabels         map[string]map[string]string // Input.NamespaceLabels
	baseTopo         topoState
	ownersLater      func(*topoState)
	preferNoSchedule bool // some pool or node has a PreferNoSchedule taint
	hasTopo          bool // some pod has levels, constraints or counters

	// share is the weighted-share ascent's setup, shared by the LP's warm
	// starts (lpSeeds).
	share *shareSetup

	// deadline ends Solve's search (zero: none); see expired. Passes run
	// with abortable set give up (runSeeded returns nil) past it.
	deadline  time.Time
	abortable bool
}

// expired reports whether the search's deadline has passed.
func (p *prepared) expired() bool {
	return !p.deadline.IsZero() && !time.Now().Before(p.deadline)
}

type podInfo struct {
	pod *Pod
	key string // namespace/name
	req resources.List
	sig *podSignature // levels[0]
	// levels are the relaxation levels (see levels); most pods have one.
	levels []*podSignature
	topo   *podTopo
	ports  []HostPort
	// class is the pod's packing class (see podClasses): Solve may pack
	// each class under its own Strategy.
	class int
	idx   int // index in prepared.pods (packing order)
}

// typeInfo is one instance type of one pool.
type typeInfo struct {
	opt    *InstanceTypeOption
	name   string
	labels map[string]string
	vcpu   int
	exotic bool
	offs   []catalog.Offering // at most maxOfferings
	prices []float64          // per offering, USD/hour
}

// poolInfo is a NodePool with its instance types compiled.
type poolInfo struct {
	np    *NodePool
	idx   int
	types []typeInfo // sorted by name
	// base has bit i of type t set when offering i of t is available and
	// meets the pool's own requirements.
	base []uint64
	// fail names a pool requirement that no node of the pool can meet.
	fail string
	// free holds the pool's requirements on keys only requirements define.
	free     map[string][]req
	overhead []resources.List // daemonset requests per type
	usable   []resources.List // allocatable minus daemonset overhead per type
	// class groups types with the same usable shape: a fit test per class
	// serves all its types.
	class       []int32
	classUsable []resources.List
	// maxUsable is the element-wise largest usable shape among types with
	// an available offering.
	maxUsable resources.List
	minValues []req // pool requirements with minValues on type or offering keys
	// bestEffort: minValues relaxed rather than refused (Input.MinValuesBestEffort).
	bestEffort bool
	// offZone is the zone index of each offering of each type (-1 none);
	// zoneMask[z][t] the offerings of type t in zone z.
	offZone  [][]int8
	zoneMask [][]uint64
	// valMask[k][v][t] are the offerings of type t whose node carries
	// value v of topology key k (valMask[0] is zoneMask).
	valMask [][][]uint64
	dsPorts [][]HostPort // host ports held by daemonset pods, per type
}

// podSignature is a pod's scheduling constraints apart from requests; pods with
// the same signature share every compatibility result.
type podSignature struct {
	nodeSelector map[string]string
	terms        [][]req // ORed; each ANDed with the node selector already
	emptyTerm    []bool  // term came from an empty affinity term (matches nothing)
	tolerations  []corev1.Toleration
	strictPNS    bool // PreferNoSchedule taints block (a preference not yet relaxed)
	perPool      []*poolSignature
	perNode      []int8 // 0 unknown, 1 compatible, 2 not
	// cons are the topology constraints at this level. monotone holds when
	// a claim or node that rejected the pod rejects every later pod with
	// this signature and requests at least as large (no zone or affinity
	// constraint, whose verdict changes as other pods are placed).
	cons     []*constraint
	monotone bool
	// eligible caches, per key and inclusion policy, the values a spread
	// counts (prepared.eligible).
	eligible     [maxKeys * 4]uint64
	eligibleDone uint32
	// domains, when set, is the signature without the pod's volume
	// requirements: its zones are the ones topology spread counts.
	domains *podSignature
}

// poolSignature is a signature compiled against one pool.
type poolSignature struct {
	taint *corev1.Taint // first pool taint the pod does not tolerate
	terms []*compiledTerm
}

// compiledTerm is one ORed affinity term (with the node selector) against one pool.
type compiledTerm struct {
	reqs []req
	// masks has, per pool type, the offerings meeting both the pool and
	// this term; it is the pool's base slice itself when trivial.
	masks   []uint64
	trivial bool
	any     bool
	free    []req  // requirements on the pool's free keys
	fail    string // a requirement no node of the pool can meet
	// byPrice lists the pool types with a nonzero mask, cheapest
	// compatible offering first (ties by name).
	byPrice []int32
}

// withMetadataName copies namespace labels, each with the
// kubernetes.io/metadata.name label the API server sets.
func withMetadataName(nsl map[string]map[string]string) map[string]map[string]string {
	if nsl == nil {
		return nil
	}
	out := make(map[string]map[string]string, len(nsl))
	for ns, l := range nsl {
		c := make(map[string]string, len(l)+1)
		for k, v := range l {
			c[k] = v
		}
		c[corev1.LabelMetadataName] = ns
		out[ns] = c
	}
	return out
}

func prepare(in Input) *prepared { return prepareWith(in, preparePools(in), nil) }

// poolSet is an input's pools compiled: newPoolInfo in weight order with
// the daemonset overhead added. It depends on in.NodePools and
// in.DaemonSets only, and nothing writes a poolInfo afterwards except the
// zone fields (prepareTopology replaces them), so one poolSet serves many
// inputs that share those two (see RemovalSimulator): prepareWith works on
// shallow copies.
type poolSet struct {
	pools            []*poolInfo
	maxVCPU          int
	maxUsable        resources.List
	preferNoSchedule bool
}

func preparePools(in Input) *poolSet {
	ps := &poolSet{}
	nps := make([]*NodePool, len(in.NodePools))
	for i := range in.NodePools {
		nps[i] = &in.NodePools[i]
	}
	sort.SliceStable(nps, func(i, j int) bool {
		if nps[i].Weight != nps[j].Weight {
			return nps[i].Weight > nps[j].Weight
		}
		return nps[i].Name < nps[j].Name
	})
	for i, np := range nps {
		pl := newPoolInfo(np, i)
		pl.bestEffort = in.MinValuesBestEffort
		ps.pools = append(ps.pools, pl)
		for t := range pl.types {
			if pl.base[t] != 0 && pl.types[t].vcpu > ps.maxVCPU {
				ps.maxVCPU = pl.types[t].vcpu
			}
		}
	}
	dss := sortedDaemonSets(in.DaemonSets)
	for _, pl := range ps.pools {
		pl.addDaemonSets(dss)
		ps.maxUsable = ps.maxUsable.Max(pl.maxUsable)
	}
	for _, pl := range ps.pools {
		for _, t := range pl.np.Taints {
			ps.preferNoSchedule = ps.preferNoSchedule || t.Effect == corev1.TaintEffectPreferNoSchedule
		}
	}
	return ps
}

// prepareWith prepares in over its compiled pools ps (preparePools of an
// input with the same NodePools and DaemonSets). existing, if not nil,
// stands for in.ExistingPods.
func prepareWith(in Input, ps *poolSet, existing []*ExistingPod) *prepared {
	p := &prepared{sigs: map[string]*podSignature{}, opens: map[openKey]*candidates{}, counters: map[string]*counter{}}
	p.existing, p.nsLabels = existing, withMetadataName(in.NamespaceLabels)
	if existing == nil {
		p.existing = make([]*ExistingPod, len(in.ExistingPods))
		for i := range in.ExistingPods {
			p.existing[i] = &in.ExistingPods[i]
		}
	}
	p.maxVCPU, p.maxUsable, p.preferNoSchedule = ps.maxVCPU, ps.maxUsable, ps.preferNoSchedule
	p.pools = make([]*poolInfo, len(ps.pools))
	for i, pl := range ps.pools {
		c := *pl
		p.pools[i] = &c
	}

	p.nodes = make([]*Node, 0, len(in.ExistingNodes))
	for i := range in.ExistingNodes {
		p.nodes = append(p.nodes, &in.ExistingNodes[i])
	}
	sort.SliceStable(p.nodes, func(i, j int) bool { return p.nodes[i].Name < p.nodes[j].Name })

	for _, n := range p.nodes {
		for _, t := range n.Taints {
			p.preferNoSchedule = p.preferNoSchedule || t.Effect == corev1.TaintEffectPreferNoSchedule
		}
	}
	p.prepareTopology(&in)
	for i := range in.Pods {
		pod := &in.Pods[i]
		r := pod.Requests
		if r[resources.Pods] < 1 {
			r[resources.Pods] = 1
		}
		if why := overKeys(pod, p.overKeys); why != "" && pod.Refused == "" {
			cp := *pod
			cp.Refused = why
			pod = &cp
		}
		pi := &podInfo{pod: pod, key: pod.Namespace + "/" + pod.Name, req: r, ports: normPorts(pod.HostPorts)}
		pi.levels = p.levels(pod)
		pi.sig = pi.levels[0]
		p.hasTopo = p.hasTopo || len(pi.levels) > 1 || len(pi.sig.cons) > 0
		p.pods = append(p.pods, pi)
	}
	p.finishTopology(&in)
	p.hasTopo = p.hasTopo || len(p.ctrList) > 0
	sort.SliceStable(p.pods, func(i, j int) bool { return podLess(p.pods[i], p.pods[j]) })
	for i, pi := range p.pods {
		pi.idx = i
	}
	p.podClasses()
	return p
}

// podClasses numbers the pods' packing classes in pod order: pods that
// request accelerators or not, by the first pool (weight order) whose
// taints they tolerate. Classes rarely share nodes, and the best upsize
// tolerance and size cap differ between them (GPU pods want one GPU per
// node, memory-heavy replicas the largest r types).
func (p *prepared) podClasses() {
	type key struct {
		ext  bool
		pool int
	}
	ids := map[key]int{}
	for _, pi := range p.pods {
		k := key{ext: pi.req.HasExtended(), pool: -1}
		last := pi.levels[len(pi.levels)-1]
		for i, pl := range p.pools {
			if last.forPool(pl).taint == nil {
				k.pool = i
				break
			}
		}
		id, ok := ids[k]
		if !ok {
			id = len(ids)
			ids[k] = id
		}
		pi.class = id
	}
	p.classes = len(ids)
}

// podLess is the first-fit-decreasing order: cpu desc, memory desc, older
// first, then namespace/name and UID.
func podLess(a, b *podInfo) bool {
	if a.req[resources.CPU] != b.req[resources.CPU] {
		return a.req[resources.CPU] > b.req[resources.CPU]
	}
	if a.req[resources.Memory] != b.req[resources.Memory] {
		return a.req[resources.Memory] > b.req[resources.Memory]
	}
	if a.pod.CreationUnix != b.pod.CreationUnix {
		return a.pod.CreationUnix < b.pod.CreationUnix
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.pod.UID < b.pod.UID
}

func newPoolInfo(np *NodePool, idx int) *poolInfo {
	pl := &poolInfo{np: np, idx: idx, free: map[string][]req{}}
	opts := make([]*InstanceTypeOption, 0, len(np.InstanceTypes))
	for i := range np.InstanceTypes {
		if np.InstanceTypes[i].Type != nil {
			opts = append(opts, &np.InstanceTypes[i])
		}
	}
	sort.SliceStable(opts, func(i, j int) bool { return opts[i].Type.Name < opts[j].Type.Name })
	for _, o := range opts {
		it := o.Type
		offs := o.Offerings
		if len(offs) > maxOfferings {
			offs = offs[:maxOfferings]
		}
		ti := typeInfo{opt: o, name: it.Name, labels: it.Labels(), vcpu: it.VCPU, exotic: isExotic(it), offs: offs}
		for _, of := range offs {
			ti.prices = append(ti.prices, of.Price)
		}
		pl.types = append(pl.types, ti)
	}
	// Requirements on keys nothing else defines are free: the NodeClaim picks
	// a value within them.
	for _, r := range np.Requirements {
		if pl.kind(r.Key) == keyAbsent || pl.kind(r.Key) == keyFree {
			pl.free[r.Key] = append(pl.free[r.Key], r)
		}
	}
	pl.base = make([]uint64, len(pl.types))
	for t := range pl.types {
		var m uint64
		for i := range pl.types[t].offs {
			if pl.types[t].offs[i].Available {
				m |= 1 << uint(i)
			}
		}
		pl.base[t] = m
	}
	c := pl.compileWith(pl.base, np.Requirements, false)
	pl.base, pl.fail = c.masks, c.fail
	for _, r := range np.Requirements {
		if pl.fail == "" && pl.kind(r.Key) == keyFree && !satisfiable(pl.free[r.Key]) {
			pl.fail = reqString(r)
			pl.base = make([]uint64, len(pl.types))
		}
	}
	for _, r := range np.Requirements {
		if r.MinValues != nil && *r.MinValues > 0 && (typeLevelKeys[r.Key] || isOfferingKey(r.Key)) {
			pl.minValues = append(pl.minValues, r)
		}
	}
	pl.overhead = make([]resources.List, len(pl.types))
	pl.usable = make([]resources.List, len(pl.types))
	for t := range pl.types {
		pl.usable[t] = pl.types[t].opt.Shape.Allocatable
	}
	return pl
}

// isExotic reports GPU, accelerator and bare-metal types, which a claim
// only uses when nothing else fits its first pod.
func isExotic(it *catalog.InstanceType) bool {
	return it.GPUCount > 0 || it.AcceleratorCount > 0 || it.BareMetal
}

// kind classifies a label key for nodes of this pool.
func (pl *poolInfo) kind(key string) int {
	switch {
	case typeLevelKeys[key]:
		return keyType
	case isOfferingKey(key):
		return keyOffering
	case key == apiv1.LabelNodePool:
		return keyConst
	}
	if _, ok := pl.np.Labels[key]; ok {
		return keyConst
	}
	if _, ok := pl.free[key]; ok {
		return keyFree
	}
	return keyAbsent
}

func (pl *poolInfo) constValue(key string) (string, bool) {
	if key == apiv1.LabelNodePool {
		return pl.np.Name, true
	}
	v, ok := pl.np.Labels[key]
	return v, ok
}

// compile evaluates requirements (ANDed) against the pool's types and offerings.
func (pl *poolInfo) compile(reqs []req) *compiledTerm {
	return pl.compileWith(pl.base, reqs, true)
}

// compileWith narrows base by reqs. checkFree also checks requirements on
// free keys against the pool's own (the pool's base compile skips that).
func (pl *poolInfo) compileWith(base []uint64, reqs []req, checkFree bool) *compiledTerm {
	c := &compiledTerm{reqs: reqs, masks: base, trivial: true}
	own := func() {
		if c.trivial {
			c.masks = append([]uint64(nil), base...)
			c.trivial = false
		}
	}
	for _, r := range reqs {
		if c.fail != "" {
			break
		}
		switch pl.kind(r.Key) {
		case keyType:
			own()
			for t := range pl.types {
				if c.masks[t] == 0 {
					continue
				}
				v, has := pl.types[t].labels[r.Key]
				if !r.Matches(v, has) {
					c.masks[t] = 0
				}
			}
		case keyOffering:
			own()
			for t := range pl.types {
				m := c.masks[t]
				for i := range pl.types[t].offs {
					if m&(1<<uint(i)) == 0 {
						continue
					}
					v, has := offeringValue(r.Key, &pl.types[t].offs[i])
					if !r.Matches(v, has) {
						m &^= 1 << uint(i)
					}
				}
				c.masks[t] = m
			}
		case keyConst:
			v, has := pl.constValue(r.Key)
			if !r.Matches(v, has) {
				c.fail = reqString(r)
			}
		case keyFree:
			if checkFree {
				c.free = append(c.free, r)
				if !satisfiable(append(append([]req(nil), pl.free[r.Key]...), r)) {
					c.fail = reqString(r)
				}
			}
		case keyAbsent:
			if !r.Matches("", false) {
				c.fail = reqString(r)
			}
		}
	}
	if c.fail != "" {
		c.masks = make([]uint64, len(pl.types))
		c.trivial = false
		return c
	}
	for t, m := range c.masks {
		if m != 0 {
			c.byPrice = append(c.byPrice, int32(t))
		}
	}
	c.any = len(c.byPrice) > 0
	ms := make([]uint64, len(c.byPrice))
	for i, t := range c.byPrice {
		ms[i] = c.masks[t]
	}
	pl.sortByPrice(c.byPrice, ms)
	return c
}

// sortedDaemonSets is the DaemonSets by namespace and name.
func sortedDaemonSets(in []DaemonSet) []*DaemonSet {
	dss := make([]*DaemonSet, len(in))
	for i := range in {
		dss[i] = &in[i]
	}
	sort.SliceStable(dss, func(i, j int) bool {
		if dss[i].Namespace != dss[j].Namespace {
			return dss[i].Namespace < dss[j].Namespace
		}
		return dss[i].Name < dss[j].Name
	})
	return dss
}

// addDaemonSets computes, per instance type, the requests of the DaemonSet
// pods that would run on a node of that type: the pod tolerates the pool's
// taints and one of its affinity terms (with its node selector) matches the
// type and at least one of its offerings. Requirements on offering or free
// keys therefore count pessimistically (the DaemonSet is counted when some
// node of the type could carry it).
func (pl *poolInfo) addDaemonSets(dss []*DaemonSet) {
	for _, ds := range dss {
		if untolerated(pl.np.Taints, ds.Pod.Tolerations, false) != nil {
			continue
		}
		ports := normPorts(ds.Pod.HostPorts)
		r := ds.Pod.Requests
		if r[resources.Pods] < 1 {
			r[resources.Pods] = 1
		}
		sig := newSig(&ds.Pod, 0, 0, false)
		var terms []*compiledTerm
		for i, reqs := range sig.terms {
			if sig.emptyTerm[i] {
				continue
			}
			terms = append(terms, pl.compile(reqs))
		}
		for t := range pl.types {
			for _, c := range terms {
				if c.masks[t] != 0 {
					pl.overhead[t] = pl.overhead[t].Add(r)
					if len(ports) > 0 {
						if pl.dsPorts == nil {
							pl.dsPorts = make([][]HostPort, len(pl.types))
						}
						pl.dsPorts[t] = append(pl.dsPorts[t], ports...)
					}
					break
				}
			}
		}
	}
	pl.maxUsable = resources.List{}
	classOf := map[resources.List]int32{}
	pl.class = make([]int32, len(pl.types))
	for t := range pl.types {
		u := pl.types[t].opt.Shape.Allocatable.Sub(pl.overhead[t])
		pl.usable[t] = u
		if pl.base[t] != 0 {
			pl.maxUsable = pl.maxUsable.Max(u)
		}
		cl, ok := classOf[u]
		if !ok {
			cl = int32(len(pl.classUsable))
			classOf[u] = cl
			pl.classUsable = append(pl.classUsable, u)
		}
		pl.class[t] = cl
	}
}

// signature returns the shared constraint record of a pod.
func (p *prepared) signature(pod *Pod, strictPNS bool, cons []*constraint, domains *podSignature) *podSignature {
	var b strings.Builder
	b.WriteString(sigKey(pod))
	b.WriteString(strconv.FormatBool(strictPNS))
	if domains != nil {
		fmt.Fprintf(&b, "|d%p", domains)
	}
	for _, c := range cons {
		fmt.Fprintf(&b, "|%d:%d:%d:%d:%t:%d", c.kind, c.ctr.id, c.maxSkew, c.minDomains, c.pref, c.policy)
	}
	for _, hp := range normPorts(pod.HostPorts) {
		fmt.Fprintf(&b, "|p%s:%s:%d", hp.Protocol, hp.IP, hp.Port)
	}
	key := b.String()
	if s, ok := p.sigs[key]; ok {
		return s
	}
	s := newSig(pod, len(p.pools), len(p.nodes), strictPNS)
	s.cons, s.monotone, s.domains = cons, true, domains
	for _, c := range cons {
		if c.ctr.key != domHost || c.kind == topoAffinity {
			s.monotone = false
		}
	}
	p.sigs[key] = s
	return s
}

func newSig(pod *Pod, pools, nodes int, strictPNS bool) *podSignature {
	s := &podSignature{nodeSelector: pod.NodeSelector, tolerations: pod.Tolerations, strictPNS: strictPNS,
		perPool: make([]*poolSignature, pools), perNode: make([]int8, nodes)}
	keys := make([]string, 0, len(pod.NodeSelector))
	for k := range pod.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sel := make([]req, 0, len(keys))
	for _, k := range keys {
		sel = append(sel, req{Key: k, Operator: apiv1.OpIn, Values: []string{pod.NodeSelector[k]}})
	}
	if len(pod.RequiredAffinity) == 0 {
		s.terms = [][]req{sel}
		s.emptyTerm = []bool{false}
		return s
	}
	for _, term := range pod.RequiredAffinity {
		t := append(append(make([]req, 0, len(sel)+len(term)), sel...), term...)
		s.terms = append(s.terms, t)
		s.emptyTerm = append(s.emptyTerm, len(term) == 0)
	}
	return s
}

// sigKey is a canonical string of a pod's node selector, affinity terms and
// tolerations.
func sigKey(pod *Pod) string {
	var b strings.Builder
	keys := make([]string, 0, len(pod.NodeSelector))
	for k := range pod.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(pod.NodeSelector[k])
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, term := range pod.RequiredAffinity {
		for _, r := range term {
			b.WriteString(r.Key)
			b.WriteByte(0)
			b.WriteString(r.Operator)
			for _, v := range r.Values {
				b.WriteByte(0)
				b.WriteString(v)
			}
			b.WriteByte(2)
		}
		b.WriteByte(3)
	}
	b.WriteByte(1)
	for _, t := range pod.Tolerations {
		b.WriteString(t.Key)
		b.WriteByte(0)
		b.WriteString(string(t.Operator))
		b.WriteByte(0)
		b.WriteString(t.Value)
		b.WriteByte(0)
		b.WriteString(string(t.Effect))
		b.WriteByte(2)
	}
	return b.String()
}

// forPool compiles the signature against a pool (cached).
func (s *podSignature) forPool(pl *poolInfo) *poolSignature {
	if sp := s.perPool[pl.idx]; sp != nil {
		return sp
	}
	sp := &poolSignature{taint: untolerated(pl.np.Taints, s.tolerations, s.strictPNS)}
	for i, reqs := range s.terms {
		if s.emptyTerm[i] {
			sp.terms = append(sp.terms, &compiledTerm{reqs: reqs, masks: make([]uint64, len(pl.types)), fail: "an empty required node-affinity term (matches no node)"})
			continue
		}
		c := pl.compile(reqs)
		if pl.fail != "" && c.fail == "" {
			c.fail = pl.fail
		}
		sp.terms = append(sp.terms, c)
	}
	s.perPool[pl.idx] = sp
	return sp
}

// fitsNode reports whether the signature allows an existing node (labels
// and taints; resources are checked by the caller).
func (s *podSignature) fitsNode(i int, n *Node) bool {
	if v := s.perNode[i]; v != 0 {
		return v == 1
	}
	ok := untolerated(n.Taints, s.tolerations, s.strictPNS) == nil && s.matchesLabels(n.Labels)
	s.perNode[i] = 2
	if ok {
		s.perNode[i] = 1
	}
	return ok
}

func (s *podSignature) matchesLabels(labels map[string]string) bool {
	for i, term := range s.terms {
		if s.emptyTerm[i] {
			continue
		}
		ok := true
		for _, r := range term {
			v, has := labels[r.Key]
			if !r.Matches(v, has) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// sortByPrice orders types (with their aligned offering masks) by the
// cheapest offering in their mask, ties by name (the pool's type order).
func (pl *poolInfo) sortByPrice(ts []int32, ms []uint64) {
	prices := make([]float64, len(ts))
	for i, t := range ts {
		prices[i] = pl.types[t].cheapest(ms[i])
	}
	sort.Sort(byPrice{ts: ts, ms: ms, prices: prices})
}

type byPrice struct {
	ts     []int32
	ms     []uint64
	prices []float64
}

func (b byPrice) Len() int { return len(b.ts) }
func (b byPrice) Less(i, j int) bool {
	if b.prices[i] != b.prices[j] {
		return b.prices[i] < b.prices[j]
	}
	return b.ts[i] < b.ts[j]
}
func (b byPrice) Swap(i, j int) {
	b.ts[i], b.ts[j] = b.ts[j], b.ts[i]
	b.ms[i], b.ms[j] = b.ms[j], b.ms[i]
	b.prices[i], b.prices[j] = b.prices[j], b.prices[i]
}
