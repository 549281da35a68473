package disruption

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
)

// BlockKind is one kind of reason a node is not disrupted. Its value is
// the reason label of joinery_disruption_blocked_nodes.
type BlockKind string

// Why a node is not disrupted. Candidate filtering (Filter) finds the
// first group, a pass (PassBlocks) the rest.
const (
	BlockNoNode           BlockKind = "no_node"         // the NodeClaim has no (cached) Node yet
	BlockNotInitialized   BlockKind = "not_initialized" // the NodeClaim is not Initialized
	BlockDeleting         BlockKind = "deleting"        // the NodeClaim is being deleted
	BlockDisrupting       BlockKind = "disrupting"      // tainted karpenter.sh/disrupted: a drain is under way
	BlockNominated        BlockKind = "nominated"       // holds nominations for pending pods
	BlockDoNotDisruptNode BlockKind = "do_not_disrupt_node"
	BlockDoNotDisruptPod  BlockKind = "do_not_disrupt_pod"
	BlockPDB              BlockKind = "pdb"                    // a PodDisruptionBudget allows no eviction of a pod
	BlockNoController     BlockKind = "pod_without_controller" // evicting a bare pod would lose it
	BlockNodePoolNotFound BlockKind = "nodepool_not_found"

	BlockBudget                BlockKind = "budget"                 // the NodePool's budget allows no more now
	BlockConsolidationDisabled BlockKind = "consolidation_disabled" // consolidateAfter: Never
	BlockWhenEmpty             BlockKind = "when_empty"             // consolidationPolicy WhenEmpty, node not empty
	BlockConsolidateAfter      BlockKind = "consolidate_after"      // consolidateAfter has not elapsed
	BlockNoCheaper             BlockKind = "no_cheaper_replacement"
	BlockWouldNotFit           BlockKind = "would_not_fit" // its pods fit nowhere else (or need more than one new node)
	BlockSpotToSpot            BlockKind = "spot_to_spot"  // spot-to-spot off, or too few cheaper spot types
	BlockBalanced              BlockKind = "balanced"      // a Balanced pool does not approve the move
)

// BlockKinds lists every kind, candidate filtering's first.
var BlockKinds = []BlockKind{
	BlockNoNode, BlockNotInitialized, BlockDeleting, BlockDisrupting, BlockNominated,
	BlockDoNotDisruptNode, BlockDoNotDisruptPod, BlockPDB, BlockNoController, BlockNodePoolNotFound,
	BlockBudget, BlockConsolidationDisabled, BlockWhenEmpty, BlockConsolidateAfter,
	BlockNoCheaper, BlockWouldNotFit, BlockSpotToSpot, BlockBalanced,
}

// Event reasons, Karpenter's (pkg/events): DisruptionBlocked when a node
// is not a disruption candidate, Unconsolidatable when consolidation
// cannot take it.
const (
	EventDisruptionBlocked = "DisruptionBlocked"
	EventUnconsolidatable  = "Unconsolidatable"
)

// Event is the Kubernetes Event reason a kind is published under on the
// Node and its NodeClaim ("": none, as in Karpenter: a drain under way and
// the consolidateAfter clock are states, not blocks).
func (k BlockKind) Event() string {
	switch k {
	case BlockDisrupting, BlockConsolidateAfter:
		return ""
	case BlockConsolidationDisabled, BlockWhenEmpty, BlockNoCheaper, BlockWouldNotFit, BlockSpotToSpot, BlockBalanced:
		return EventUnconsolidatable
	}
	return EventDisruptionBlocked
}

// Filtering reports whether the kind comes from candidate filtering (the
// node is not a candidate) rather than from a pass over the candidates.
func (k BlockKind) Filtering() bool {
	switch k {
	case BlockNoNode, BlockNotInitialized, BlockDeleting, BlockDisrupting, BlockNominated,
		BlockDoNotDisruptNode, BlockDoNotDisruptPod, BlockPDB, BlockNoController, BlockNodePoolNotFound:
		return true
	}
	return false
}

// Block is one reason, with the sentence the Event carries.
type Block struct {
	Kind    BlockKind
	Message string
	// BudgetReason is, for BlockBudget, the budget reason that allows
	// nothing (Empty, Underutilized...).
	BudgetReason string
}

// Blocked is a node (or a NodeClaim without one) and why it is not being
// disrupted.
type Blocked struct {
	NodeClaim string
	Node      string // "" before the Node registered
	NodePool  string
	Blocks    []Block
}

// podsNamed is how many pods one Block names before "and N more".
const podsNamed = 3

// Filter is candidate filtering with its reasons: the candidates (as
// Candidates) and, for every other NodeClaim, every reason it is not one.
// A NodeClaim without a Node, not initialized, being deleted or already
// being disrupted has that one reason; otherwise all of: nominations, the
// node's do-not-disrupt annotation, a missing NodePool, and its active
// pods that block (do-not-disrupt, a PodDisruptionBudget allowing no
// eviction, no controller), naming the pods and PDBs.
func Filter(claims []Claim) ([]Candidate, []Blocked) {
	var out []Candidate
	var blocked []Blocked
	for _, s := range claims {
		c, bs := filterOne(s)
		if len(bs) == 0 {
			out = append(out, c)
			continue
		}
		b := Blocked{NodeClaim: s.Claim.Name, NodePool: s.Claim.Labels[apiv1.LabelNodePool], Blocks: bs}
		if s.Node != nil {
			b.Node = s.Node.Name
		}
		if s.Pool != nil {
			b.NodePool = s.Pool.Name
		}
		blocked = append(blocked, b)
	}
	return out, blocked
}

func filterOne(s Claim) (Candidate, []Block) {
	nc, node := s.Claim, s.Node
	one := func(k BlockKind, msg string) (Candidate, []Block) {
		return Candidate{}, []Block{{Kind: k, Message: msg}}
	}
	switch {
	case nc.DeletionTimestamp != nil:
		return one(BlockDeleting, "Node is deleting or marked for deletion")
	case nc.Status.NodeName == "" || node == nil:
		return one(BlockNoNode, "Nodeclaim does not have an associated node")
	case !Initialized(nc):
		return one(BlockNotInitialized, "Node isn't initialized")
	case HasTaint(node.Spec.Taints, apiv1.TaintKeyDisrupted):
		return one(BlockDisrupting, "Node is being disrupted")
	}
	var bs []Block
	switch {
	case s.Booked != "":
		bs = append(bs, Block{Kind: BlockNominated, Message: "Node is booked for " + s.Booked})
	case s.Nominating:
		bs = append(bs, Block{Kind: BlockNominated, Message: "Node is nominated for a pending pod"})
	}
	if b := NodeBlock(node.Annotations); b != nil {
		bs = append(bs, *b)
	}
	if s.Pool == nil {
		return Candidate{}, append(bs, Block{Kind: BlockNodePoolNotFound, Message: fmt.Sprintf("NodePool not found (NodePool=%s)", nc.Labels[apiv1.LabelNodePool])})
	}
	c := Candidate{Node: node, Claim: nc, Pool: s.Pool, Class: s.Class, Offered: s.Offered, Price: s.Price, RescheduleDisruptionCost: PerNodeBaseDisruptionCost, BufferPods: s.BufferPods}
	var dnd, bare podList
	var pdbs pdbGroups
	// By name, so a node's messages read the same every pass (Events are
	// deduplicated by message).
	pods := append([]Pod(nil), s.Pods...)
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		b := PodBlock(p, false)
		switch {
		case !p.Active:
			continue
		case b != nil && b.Kind == BlockDoNotDisruptPod:
			dnd.add(b.Message)
			continue
		case !p.Reschedulable:
			continue
		}
		if p.Blocked {
			pdbs.add(p.PDBs, p.named())
		}
		if b != nil {
			bare.add(b.Message)
		}
		c.Pods++
		c.RescheduleDisruptionCost += max(0, p.EvictionCost())
	}
	bs = append(bs, dnd.block(BlockDoNotDisruptPod)...)
	bs = append(bs, pdbs.block()...)
	bs = append(bs, bare.block(BlockNoController)...)
	if len(bs) > 0 {
		return Candidate{}, bs
	}
	return c, nil
}

func (p Pod) named() string {
	if p.Name == "" {
		return "(unnamed)"
	}
	return p.Name
}

// podList gathers the messages of one kind on one node: the first
// podsNamed, then a count.
type podList struct {
	msgs []string
	more int
}

func (l *podList) add(msg string) {
	if len(l.msgs) < podsNamed {
		l.msgs = append(l.msgs, msg)
		return
	}
	l.more++
}

func (l *podList) block(k BlockKind) []Block {
	if len(l.msgs) == 0 {
		return nil
	}
	msg := strings.Join(l.msgs, "; ")
	if l.more > 0 {
		msg += fmt.Sprintf("; and %d more pods", l.more)
	}
	return []Block{{Kind: k, Message: msg}}
}

// pdbGroups gathers a node's PDB-blocked pods by the budgets that block
// them, in the order first seen.
type pdbGroups struct {
	keys []string
	by   map[string]*pdbGroup
}

type pdbGroup struct {
	pdbs []string
	pods []string
	more int
}

func (g *pdbGroups) add(pdbs []string, pod string) {
	k := strings.Join(pdbs, ", ")
	if g.by == nil {
		g.by = map[string]*pdbGroup{}
	}
	e, ok := g.by[k]
	if !ok {
		e = &pdbGroup{pdbs: pdbs}
		g.by[k] = e
		g.keys = append(g.keys, k)
	}
	if len(e.pods) < podsNamed {
		e.pods = append(e.pods, pod)
	} else {
		e.more++
	}
}

// block is one Block naming each budget and the pods it blocks: Karpenter's
// sentences ("PDB ... prevents pod evictions", "Eviction does not support
// multiple PDBs") with the objects named.
func (g *pdbGroups) block() []Block {
	if len(g.keys) == 0 {
		return nil
	}
	var msgs []string
	for _, k := range g.keys {
		e := g.by[k]
		pods := "pod " + e.pods[0]
		if len(e.pods) > 1 || e.more > 0 {
			pods = "pods " + strings.Join(e.pods, ", ")
		}
		if e.more > 0 {
			pods += fmt.Sprintf(" and %d more", e.more)
		}
		switch {
		case len(e.pdbs) > 1:
			msgs = append(msgs, fmt.Sprintf("Eviction does not support multiple PDBs (PodDisruptionBudgets %s select %s)", k, pods))
		case len(e.pdbs) == 1:
			msgs = append(msgs, fmt.Sprintf("PDB %s prevents pod evictions (%s)", k, pods))
		default:
			msgs = append(msgs, fmt.Sprintf("A PDB prevents pod evictions (%s)", pods))
		}
	}
	return []Block{{Kind: BlockPDB, Message: strings.Join(msgs, "; ")}}
}

// Trace records what a pass's simulations answered for single nodes (the
// single-node consolidation verdicts). Wrap the pass's Simulate with it;
// safe for concurrent use.
type Trace struct {
	mu     sync.Mutex
	single map[string]solver.RemovalResult
}

// Wrap returns sim recording its single-node answers.
func (t *Trace) Wrap(sim func([]string) solver.RemovalResult) func([]string) solver.RemovalResult {
	return func(nodes []string) solver.RemovalResult {
		r := sim(nodes)
		if len(nodes) == 1 {
			t.mu.Lock()
			if t.single == nil {
				t.single = map[string]solver.RemovalResult{}
			}
			t.single[nodes[0]] = r
			t.mu.Unlock()
		}
		return r
	}
}

func (t *Trace) verdict(node string) (solver.RemovalResult, bool) {
	if t == nil {
		return solver.RemovalResult{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.single[node]
	return r, ok
}

// PassBlocks says, for the candidates of a decided pass that the decision
// did not take, what kept each from being disrupted: its NodePool's budget
// allowing no more for its reason now (Empty when it holds no
// reschedulable pod, else Underutilized); consolidation off for it
// (consolidateAfter Never; WhenEmpty and not empty); its consolidateAfter
// clock (by Consolidatable's own verdict); and the single-node
// consolidation verdicts trace recorded (would not fit, no cheaper
// replacement, too few cheaper spot types). A candidate consolidation did
// not reach this pass has no entry.
func PassBlocks(p *Pass, d saga.DisruptionDecision, trace *Trace) []Blocked {
	taken := map[string]bool{}
	for _, n := range d.Nodes {
		taken[n] = true
	}
	var out []Blocked
	for _, c := range p.Candidates {
		if taken[c.Node.Name] {
			continue
		}
		var bs []Block
		reason := saga.ReasonUnderused
		if c.Pods == 0 {
			reason = saga.ReasonEmpty
		}
		if b, ok := p.budgetBlock(c, reason); ok {
			bs = append(bs, b)
		}
		bs = append(bs, p.consolidationBlocks(c)...)
		if r, ok := trace.verdict(c.Node.Name); ok {
			if b, ok := p.verdictBlock(c, r); ok {
				bs = append(bs, b)
			}
		}
		if len(bs) > 0 {
			out = append(out, Blocked{NodeClaim: c.Claim.Name, Node: c.Node.Name, NodePool: c.Pool.Name, Blocks: bs})
		}
	}
	return out
}

// budgetBlock: the pool's budgets allow no more disruptions for the reason now.
func (p *Pass) budgetBlock(c Candidate, reason string) (Block, bool) {
	br := BudgetReason(reason)
	pn := p.Pools[c.Pool.Name]
	allowed, err := Allowed(c.Pool.Spec.Disruption.Budgets, br, pn.Nodes, p.Now)
	if err != nil {
		return Block{Kind: BlockBudget, BudgetReason: br,
			Message: fmt.Sprintf("NodePool %s disruption budgets are invalid, so they allow nothing: %v", c.Pool.Name, err)}, true
	}
	if allowed-pn.Disrupting > 0 {
		return Block{}, false
	}
	return Block{Kind: BlockBudget, BudgetReason: br,
		Message: fmt.Sprintf("No allowed disruptions for disruption reason %s due to blocking budget (NodePool %s allows %d, %d being disrupted)",
			br, c.Pool.Name, allowed, pn.Disrupting)}, true
}

// consolidationBlocks: consolidation is off for the candidate, or its
// clock (consolidateAfter since the last pod event) has not run out.
// Empty candidates are judged by the clock alone; the others by
// Consolidatable (budgets set aside), so its clock is the only one.
func (p *Pass) consolidationBlocks(c Candidate) []Block {
	pol := c.Pool.Spec.Disruption.ConsolidationPolicy
	raw := orDefault(c.Pool.Spec.Disruption.ConsolidateAfter, "0s")
	after, err := apiv1.ParseNillableDuration(raw)
	if err != nil || after == nil {
		return []Block{{Kind: BlockConsolidationDisabled, Message: fmt.Sprintf("NodePool %q has consolidation disabled", c.Pool.Name)}}
	}
	if c.Empty() {
		if !IsConsolidatable(c.Claim, c.Pool, p.Now) {
			return []Block{{Kind: BlockConsolidateAfter, Message: fmt.Sprintf("Node is empty, consolidateAfter %s has not elapsed", raw)}}
		}
		return nil
	}
	if pol == apiv1.ConsolidationPolicyWhenEmpty {
		return []Block{{Kind: BlockWhenEmpty, Message: fmt.Sprintf("NodePool %q has consolidation policy WhenEmpty, but node is not empty", c.Pool.Name)}}
	}
	free := *c.Pool
	free.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "100%"}}
	one := c
	one.Pool = &free
	if len(Consolidatable(&Pass{Now: p.Now, Candidates: []Candidate{one}, Pools: map[string]PoolNodes{free.Name: {Nodes: 1}}}, false)) == 0 {
		return []Block{{Kind: BlockConsolidateAfter, Message: fmt.Sprintf("Node is not consolidatable yet: consolidateAfter %s has not elapsed", raw)}}
	}
	return nil
}

// verdictBlock turns a single-node simulation into a reason (false: it was
// possible and nothing in it blocks), judged as Pass.move judges it
// (without reporting the Balanced score again).
func (p *Pass) verdictBlock(c Candidate, r solver.RemovalResult) (Block, bool) {
	m, ok, _ := p.judge([]Candidate{c}, r)
	switch {
	case ok:
		return Block{}, false
	case m.block == BlockNoCheaper:
		return Block{Kind: BlockNoCheaper, Message: "Can't replace with a cheaper node"}, true
	case m.block == BlockWouldNotFit:
		return Block{Kind: BlockWouldNotFit, Message: sentence(m.why)}, true
	}
	return Block{Kind: m.block, Message: m.why}, true
}

func sentence(s string) string {
	if s == "" {
		return "Pods cannot move"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Merge joins reason lists by NodeClaim, first seen first, each node's
// reasons in the order found.
func Merge(lists ...[]Blocked) []Blocked {
	var out []Blocked
	at := map[string]int{}
	for _, l := range lists {
		for _, b := range l {
			if i, ok := at[b.NodeClaim]; ok {
				out[i].Blocks = append(out[i].Blocks, b.Blocks...)
				continue
			}
			at[b.NodeClaim] = len(out)
			b.Blocks = append([]Block(nil), b.Blocks...)
			out = append(out, b)
		}
	}
	return out
}

// Report bounds a pass's reasons for the Consolidation workflow's state:
// the first max nodes (blocks first, then states such as the
// consolidateAfter clock, then NodeClaims still launching; by node, then
// NodeClaim name), and the count of nodes by kind over all of them.
func Report(blocked []Blocked, max int) saga.BlockedReport {
	rep := saga.BlockedReport{Total: len(blocked), ByReason: map[string]int{}}
	sorted := append([]Blocked(nil), blocked...)
	// Blocks first, then states (consolidateAfter, a drain under way),
	// then NodeClaims still launching.
	rank := func(b Blocked) int {
		r := 1
		for _, x := range b.Blocks {
			switch {
			case x.Kind == BlockNoNode || x.Kind == BlockNotInitialized:
				r = 2
			case x.Kind.Event() != "":
				return 0
			}
		}
		return r
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		ri, rj := rank(sorted[i]), rank(sorted[j])
		if ri != rj {
			return ri < rj
		}
		if sorted[i].Node != sorted[j].Node {
			return sorted[i].Node < sorted[j].Node
		}
		return sorted[i].NodeClaim < sorted[j].NodeClaim
	})
	for _, b := range sorted {
		seen := map[BlockKind]bool{}
		for _, x := range b.Blocks {
			if !seen[x.Kind] {
				seen[x.Kind] = true
				rep.ByReason[string(x.Kind)]++
			}
		}
		if len(rep.Nodes) >= max {
			continue
		}
		n := saga.BlockedNode{Node: b.Node, NodeClaim: b.NodeClaim, NodePool: b.NodePool}
		for _, x := range b.Blocks {
			n.Reasons = append(n.Reasons, saga.BlockReason{Reason: string(x.Kind), Event: x.Kind.Event(), Message: x.Message})
		}
		rep.Nodes = append(rep.Nodes, n)
	}
	return rep
}
