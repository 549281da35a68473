package disruption

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
)

// MaxConsolidationCandidates bounds multi-node consolidation (as Karpenter).
const MaxConsolidationCandidates = 100

// candidatesShown is how many candidate names a decision lists.
const candidatesShown = 10

// Pass is what one consolidation pass decides over.
type Pass struct {
	// Now is the workflow's time: clocks and budget schedules read it.
	Now        time.Time
	Candidates []Candidate
	// Pools holds, by NodePool name, the node counts its budgets apply to.
	Pools map[string]PoolNodes
	// Simulate says whether the pods of nodes fit elsewhere
	// (solver.SimulateRemoval over the pass's solver input).
	Simulate func(nodes []string) solver.RemovalResult
	// OnBudgetError, if set, hears of a NodePool whose budgets do not
	// parse (it then allows nothing).
	OnBudgetError func(pool string, err error)
	// PoolTotals are the Balanced policy's pool sums, by NodePool name
	// (needed only for Balanced pools; a pool without them approves no
	// move). OnScore, if set, hears every Balanced score.
	PoolTotals map[string]PoolTotals
	OnScore    func(Score)
	// SpotToSpot is the SpotToSpotConsolidation feature gate: spot nodes
	// may be replaced by a cheaper spot node (off: only deleted).
	SpotToSpot bool
	// DriftNotBefore holds, by NodePool name, until when the pool's drift
	// is backed off (its drift replacements kept failing): drift skips
	// the pool's nodes until then and takes another pool's.
	DriftNotBefore map[string]time.Time

	backedOff []string // pools drift skipped this pass, for Why
}

// PoolNodes are a NodePool's nodes and how many of them are being
// disrupted (tainted).
type PoolNodes struct {
	Nodes      int
	Disrupting int
}

// method is one disruption method: a decision, or false.
type method func(*Pass) (saga.DisruptionDecision, bool)

// Decide makes one pass's decision. Methods in order, the first that finds
// something acts: emptiness (empty and consolidatable: consolidateAfter
// since the last pod event), drift (Drift, pools not backed off),
// multi-node then single-node consolidation (Simulate). Budgets limit
// each method per NodePool. Expiration is not among them: an expired
// NodeClaim is deleted by the expiration controller whatever the
// cluster's state (ExpiryOf). USDPerHour is left to the caller.
func Decide(p *Pass) saga.DisruptionDecision {
	d := saga.DisruptionDecision{Eligible: len(p.Candidates)}
	for _, c := range p.Candidates {
		if len(d.Candidates) < candidatesShown {
			d.Candidates = append(d.Candidates, c.Node.Name)
		}
	}
	for _, m := range []method{emptiness, drift, multiNode, singleNode} {
		if dec, ok := m(p); ok {
			dec.Eligible, dec.Candidates = d.Eligible, d.Candidates
			return dec
		}
	}
	d.Why = fmt.Sprintf("nothing to do among %d candidates", len(p.Candidates))
	for _, pool := range p.backedOff {
		d.Why += fmt.Sprintf("; drift of NodePool %s backed off until %s", pool, p.DriftNotBefore[pool].UTC().Format(time.RFC3339))
	}
	return d
}

// emptiness takes the empty candidates (Candidate.Empty) that are
// consolidatable (IsConsolidatable: consolidateAfter since their last pod
// event), highest SavingsRatio first, as budgets allow. It runs for every
// policy but consolidateAfter Never.
func emptiness(p *Pass) (saga.DisruptionDecision, bool) {
	var nodes []string
	room := budgets{}
	for _, c := range bySavingsRatio(p.Candidates) {
		if !c.Empty() || !IsConsolidatable(c.Claim, c.Pool, p.Now) {
			continue
		}
		if !p.take(room, c.Pool, saga.ReasonEmpty) {
			continue
		}
		nodes = append(nodes, c.Node.Name)
	}
	if len(nodes) == 0 {
		return saga.DisruptionDecision{}, false
	}
	return saga.DisruptionDecision{Method: saga.MethodEmptiness, Reason: saga.ReasonEmpty, Nodes: nodes,
		Why: fmt.Sprintf("%d node(s) empty, consolidateAfter passed since their last pod event", len(nodes))}, true
}

// DriftDecision is the drift method of a pass on its own (what Decide
// does when emptiness finds nothing): the first drifted candidate its
// budget allows, or false. `starter what-if` replays passes with it to
// order the nodes a NodePool or EC2NodeClass change would drift.
func DriftDecision(p *Pass) (saga.DisruptionDecision, bool) { return drift(p) }

// drift takes the first drifted candidate (Drift) its budget allows, of
// a pool whose drift is not backed off (DriftNotBefore): a pool whose
// replacements keep failing does not hold up the other pools' drift.
func drift(p *Pass) (saga.DisruptionDecision, bool) {
	room := budgets{}
	skipped := map[string]bool{}
	for _, c := range p.Candidates {
		_, why := Drift(c.Claim, c.Node, c.Pool, c.Class, c.Offered, nodeclass.LaunchedFrom(c.Claim))
		if why == "" {
			continue
		}
		if nb, ok := p.DriftNotBefore[c.Pool.Name]; ok && p.Now.Before(nb) {
			if !skipped[c.Pool.Name] {
				skipped[c.Pool.Name] = true
				p.backedOff = append(p.backedOff, c.Pool.Name)
			}
			continue
		}
		if p.take(room, c.Pool, saga.ReasonDrifted) {
			return saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{c.Node.Name},
				NodePool: c.Pool.Name, Replace: true, Why: "drifted: " + why}, true
		}
	}
	return saga.DisruptionDecision{}, false
}

// Consolidatable returns the candidates consolidation may act on: not of
// a WhenEmpty pool, consolidatable (IsConsolidatable: consolidateAfter
// since the last pod event), not empty (emptiness takes those, under the
// Empty budget), and for single-node one whose outright deletion a
// Balanced pool would approve (CanPassThreshold). They come highest
// SavingsRatio first (price per unit of disruption cost, Karpenter
// v1.14's order). The budget is applied in that order: for a multi-node
// command (multi) each pool gives as many candidates as it has room for;
// for single-node every candidate of a pool with room is a choice (one is
// taken per pass), so a 1-node budget does not pin the search to the
// first candidate by name.
func Consolidatable(p *Pass, multi bool) []Candidate {
	var out []Candidate
	for _, c := range bySavingsRatio(p.Candidates) {
		if c.Pool.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyWhenEmpty {
			continue
		}
		if c.Empty() || !IsConsolidatable(c.Claim, c.Pool, p.Now) {
			continue
		}
		if !multi && !CanPassThreshold(c, p.PoolTotals) {
			continue
		}
		out = append(out, c)
	}
	room := budgets{}
	kept := out[:0]
	for _, c := range out {
		if multi {
			if !p.take(room, c.Pool, saga.ReasonUnderused) {
				continue
			}
		} else if !p.has(room, c.Pool, saga.ReasonUnderused) {
			continue
		}
		kept = append(kept, c)
	}
	out = kept
	if len(out) > MaxConsolidationCandidates {
		out = out[:MaxConsolidationCandidates]
	}
	return out
}

// multiNode binary-searches the longest prefix of candidates whose pods fit
// on the rest plus at most one node launching strictly cheaper than them
// (replacementFor), then checks the prefixes just above it linearly (the
// feasibility is not strictly monotone).
func multiNode(p *Pass) (saga.DisruptionDecision, bool) {
	cs := Consolidatable(p, true)
	if len(cs) < 2 {
		return saga.DisruptionDecision{}, false
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Node.Name
	}
	try := func(k int) (move, bool) { return p.move(cs[:k], names[:k]) }
	lo, hi := 1, len(names) // lo: known feasible or 1
	var best move
	bestK := 0
	for lo <= hi {
		mid := (lo + hi) / 2
		if mid < 2 {
			lo = 2
			continue
		}
		if m, ok := try(mid); ok {
			best, bestK, lo = m, mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	for k := bestK + 1; k <= min(bestK+3, len(names)); k++ {
		if m, ok := try(k); ok {
			best, bestK = m, k
		}
	}
	if bestK < 2 {
		return saga.DisruptionDecision{}, false
	}
	return best.decision(saga.MethodMultiNode, names[:bestK],
		fmt.Sprintf("%d of %d candidates fit on the rest%s", bestK, len(names), replacementNote(best.replacement))), true
}

// singleNode takes the first consolidatable candidate whose pods fit on
// the rest plus at most one node launching strictly cheaper than it
// (replacementFor: spot-to-spot only behind its gate, with
// MinSpotToSpotTypes cheaper types).
func singleNode(p *Pass) (saga.DisruptionDecision, bool) {
	for _, c := range Consolidatable(p, false) {
		m, ok := p.move([]Candidate{c}, []string{c.Node.Name})
		if !ok {
			continue
		}
		return m.decision(saga.MethodSingleNode, []string{c.Node.Name}, "pods fit on the rest"+replacementNote(m.replacement)), true
	}
	return saga.DisruptionDecision{}, false
}

// move is a possible consolidation: the removal simulation and the
// replacement to launch (nil: a deletion).
type move struct {
	sim         solver.RemovalResult
	replacement *saga.Replacement
	why         string    // why it is not possible
	block       BlockKind // its kind, when not possible
}

// move simulates removing cands (named names) and applies the
// replacement rules; ok when the move may be made. Every Balanced score
// is reported to OnScore.
func (p *Pass) move(cands []Candidate, names []string) (move, bool) {
	m, ok, scores := p.judge(cands, p.Simulate(names))
	if p.OnScore != nil {
		for _, s := range scores {
			p.OnScore(s)
		}
	}
	return m, ok
}

// judge applies the replacement rules (replacementFor) and the Balanced
// policy to a removal simulation of cands: ok when the move may be made,
// else m.block and m.why say why. scores are the Balanced scores taken.
func (p *Pass) judge(cands []Candidate, sim solver.RemovalResult) (m move, ok bool, scores []Score) {
	m = move{sim: sim, why: sim.Reason}
	if !sim.Possible {
		m.block = BlockWouldNotFit
		if sim.NotCheaper {
			m.block = BlockNoCheaper
		}
		return m, false, nil
	}
	if sim.Replacement != nil {
		m.replacement, m.why = replacementFor(cands, sim.Replacement, p.SpotToSpot)
		if m.replacement == nil {
			m.block = BlockNoCheaper
			if strings.Contains(m.why, "SpotToSpotConsolidation") {
				m.block = BlockSpotToSpot
			}
			return m, false, nil
		}
	}
	approved, why, scores := Approve(cands, m.saving(), p.PoolTotals)
	if !approved {
		m.block, m.why = BlockBalanced, "Balanced: "+why
		return m, false, scores
	}
	return m, true, scores
}

// saving is what the move saves, USD/hour: the candidates' price minus the
// replacement's cheapest offering.
func (m move) saving() float64 {
	if m.replacement == nil {
		return m.sim.SavingUSDPerHour // all of it
	}
	return m.sim.CandidatesUSDPerHour - m.replacement.USDPerHour
}

func (m move) decision(method string, nodes []string, why string) saga.DisruptionDecision {
	return saga.DisruptionDecision{Method: method, Reason: saga.ReasonUnderused, Nodes: nodes,
		Replace: m.replacement != nil, Replacement: m.replacement, SavingUSDPerHour: m.saving(),
		Why: fmt.Sprintf("%s, saving %.4f USD/hour", why, m.saving())}
}

// Recheck is a decision's validation before any simulation: every node
// still a candidate (do-not-disrupt may have appeared) and empty nodes
// still empty. final: the verdict stands (an invalid one, or a valid
// emptiness); otherwise Resimulated judges a fresh simulation.
func Recheck(d saga.DisruptionDecision, cands []Candidate) (v saga.Validation, final bool) {
	byName := candidatesByNode(cands)
	for _, n := range d.Nodes {
		c, ok := byName[n]
		if !ok {
			return saga.Validation{Why: "node " + n + " is no longer a candidate (do-not-disrupt, PDB, nomination or gone)"}, true
		}
		if d.Method == saga.MethodEmptiness && !c.Empty() {
			return saga.Validation{Why: "node " + n + " is no longer empty"}, true
		}
	}
	if d.Method == saga.MethodEmptiness {
		return saga.Validation{Valid: true}, true
	}
	return saga.Validation{}, false
}

// Resimulated says whether a consolidation still holds given a fresh
// simulation of removing its nodes, as Karpenter's validation: still
// possible, and the same shape: a deletion stays a deletion, and one
// replacement stays exactly one whose options include every type the
// decision launches (so none of them got dearer or stopped fitting), still
// launching strictly below what the candidates cost.
func Resimulated(d saga.DisruptionDecision, r solver.RemovalResult) saga.Validation {
	if !r.Possible {
		return saga.Validation{Why: "no longer possible: " + r.Reason}
	}
	switch {
	case d.Replacement == nil && r.Replacement != nil:
		return saga.Validation{Why: "the pods now need a new node: the deletion became a replacement"}
	case d.Replacement == nil:
		return saga.Validation{Valid: true}
	case r.Replacement == nil:
		return saga.Validation{Why: "the pods now fit without a new node: a deletion would do"}
	}
	fresh := map[string]bool{}
	for _, it := range r.Replacement.InstanceTypes {
		fresh[it.Type.Name] = true
	}
	for _, t := range d.Replacement.InstanceTypes {
		if !fresh[t] {
			return saga.Validation{Why: "the replacement changed: instance type " + t + " is no longer an option"}
		}
	}
	if d.Replacement.MaxUSDPerHour >= r.CandidatesUSDPerHour {
		return saga.Validation{Why: fmt.Sprintf("no longer cheaper: the replacement may cost %.4f USD/hour, the nodes %.4f",
			d.Replacement.MaxUSDPerHour, r.CandidatesUSDPerHour)}
	}
	return saga.Validation{Valid: true}
}

// budgets is one method's budget accounting: disruptions left by
// NodePool/reason, filled from Pools on first use.
type budgets map[string]int

// take reserves one disruption in the pool's budget for the reason.
func (p *Pass) take(room budgets, np *apiv1.NodePool, reason string) bool {
	key := np.Name + "/" + reason
	left, ok := room[key]
	if !ok {
		pn := p.Pools[np.Name]
		allowed, err := Allowed(np.Spec.Disruption.Budgets, BudgetReason(reason), pn.Nodes, p.Now)
		if err != nil {
			if p.OnBudgetError != nil {
				p.OnBudgetError(np.Name, err)
			}
			return false
		}
		left = allowed - pn.Disrupting
	}
	if left <= 0 {
		room[key] = 0
		return false
	}
	room[key] = left - 1
	return true
}

// has reports whether the pool can disrupt one more node for the reason
// without reserving it (only one is taken per pass).
func (p *Pass) has(room budgets, np *apiv1.NodePool, reason string) bool {
	if !p.take(room, np, reason) {
		return false
	}
	room[np.Name+"/"+reason]++ // give it back
	return true
}

// BudgetReason maps a DrainAndReplace reason to Karpenter's budget reason
// ("" for reasons budgets do not name).
func BudgetReason(reason string) string {
	switch reason {
	case saga.ReasonEmpty:
		return BudgetReasonEmpty
	case saga.ReasonDrifted:
		return BudgetReasonDrifted
	case saga.ReasonUnderused:
		return BudgetReasonUnderutilized
	}
	return ""
}

func replacementNote(r *saga.Replacement) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf(" plus one %s", r.InstanceTypes[0])
}

// bySavingsRatio returns the candidates highest SavingsRatio first (ties
// by node name), leaving cs as it was.
func bySavingsRatio(cs []Candidate) []Candidate {
	out := append([]Candidate(nil), cs...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := out[i].SavingsRatio(), out[j].SavingsRatio()
		if ri != rj {
			return ri > rj
		}
		return out[i].Node.Name < out[j].Node.Name
	})
	return out
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
