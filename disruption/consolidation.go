package disruption

import (
	"fmt"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/nodeclass"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
)

// MaxConsolidationCandidates bounds multi-node consolidation (as Karpenter).
const MaxConsolidationCandidates = 100

// MinCheaperSpotTypes: a spot node is replaced by spot only when at least
// this many cheaper types remain, so consolidation does not chase the
// price-capacity-optimized allocation.
const MinCheaperSpotTypes = 15

// candidatesShown is how many candidate names a decision lists.
const candidatesShown = 10

// Pass is what one consolidation pass decides over.
type Pass struct {
	// Now is the workflow's time: clocks and budget schedules read it.
	Now        time.Time
	Candidates []Candidate
	// EmptySince is since when each empty candidate (by node name) has
	// been empty: the Empty condition's clock.
	EmptySince map[string]time.Time
	// Pools holds, by NodePool name, the node counts its budgets apply to.
	Pools map[string]PoolNodes
	// Simulate says whether the pods of nodes fit elsewhere
	// (solver.SimulateRemoval over the pass's solver input).
	Simulate func(nodes []string) solver.RemovalResult
	// OnBudgetError, if set, hears of a NodePool whose budgets do not
	// parse (it then allows nothing).
	OnBudgetError func(pool string, err error)
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
type method func(*Pass) (workflows.DisruptionDecision, bool)

// Decide makes one pass's decision. Methods in order, the first that finds
// something acts: emptiness (empty longer than consolidateAfter), drift
// (Drift, pools not backed off), multi-node then single-node
// consolidation (Simulate). Budgets limit each method per NodePool.
// Expiration is not among them: an expired NodeClaim is deleted by the
// expiration controller whatever the cluster's state (ExpiryOf).
// USDPerHour is left to the caller.
func Decide(p *Pass) workflows.DisruptionDecision {
	d := workflows.DisruptionDecision{Eligible: len(p.Candidates)}
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

// emptiness takes the empty candidates whose clock has run past their
// pool's consolidateAfter, as budgets allow.
func emptiness(p *Pass) (workflows.DisruptionDecision, bool) {
	var nodes []string
	room := budgets{}
	for _, c := range p.Candidates {
		if c.Pods > 0 {
			continue
		}
		s, ok := p.EmptySince[c.Node.Name]
		if !ok {
			continue
		}
		after, err := apiv1.ParseNillableDuration(orDefault(c.Pool.Spec.Disruption.ConsolidateAfter, "0s"))
		if err != nil || after == nil || p.Now.Sub(s) < *after {
			continue
		}
		if !p.take(room, c.Pool, workflows.ReasonEmpty) {
			continue
		}
		nodes = append(nodes, c.Node.Name)
	}
	if len(nodes) == 0 {
		return workflows.DisruptionDecision{}, false
	}
	return workflows.DisruptionDecision{Method: workflows.MethodEmptiness, Reason: workflows.ReasonEmpty, Nodes: nodes,
		Why: fmt.Sprintf("%d node(s) empty for longer than consolidateAfter", len(nodes))}, true
}

// drift takes the first drifted candidate (Drift) its budget allows, of
// a pool whose drift is not backed off (DriftNotBefore): a pool whose
// replacements keep failing does not hold up the other pools' drift.
func drift(p *Pass) (workflows.DisruptionDecision, bool) {
	room := budgets{}
	skipped := map[string]bool{}
	for _, c := range p.Candidates {
		_, why := Drift(c.Claim, c.Node, c.Pool, c.Class, nodeclass.LaunchedFrom(c.Claim))
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
		if p.take(room, c.Pool, workflows.ReasonDrifted) {
			return workflows.DisruptionDecision{Method: workflows.MethodDrift, Reason: workflows.ReasonDrifted, Nodes: []string{c.Node.Name},
				NodePool: c.Pool.Name, Replace: true, Why: "drifted: " + why}, true
		}
	}
	return workflows.DisruptionDecision{}, false
}

// Consolidatable returns the candidates consolidation may act on, most
// expensive per pod first (Karpenter's disruption-cost order). The budget
// is applied in that order: for a multi-node command (multi) each pool
// gives as many candidates as it has room for; for single-node every
// candidate of a pool with room is a choice (one is taken per pass), so a
// 1-node budget does not pin the search to the first candidate by name.
func Consolidatable(p *Pass, multi bool) []Candidate {
	var out []Candidate
	for _, c := range p.Candidates {
		if c.Pool.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyWhenEmpty {
			continue
		}
		after, err := apiv1.ParseNillableDuration(orDefault(c.Pool.Spec.Disruption.ConsolidateAfter, "0s"))
		if err != nil || after == nil || p.Now.Sub(InitializedAt(c.Claim)) < *after {
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := out[i].Price/float64(1+out[i].Pods), out[j].Price/float64(1+out[j].Pods)
		if ci != cj {
			return ci > cj
		}
		return out[i].Node.Name < out[j].Node.Name
	})
	room := budgets{}
	kept := out[:0]
	for _, c := range out {
		if multi {
			if !p.take(room, c.Pool, workflows.ReasonUnderused) {
				continue
			}
		} else if !p.has(room, c.Pool, workflows.ReasonUnderused) {
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
// on the rest plus at most one cheaper node, then checks the prefixes just
// above it linearly (the feasibility is not strictly monotone).
func multiNode(p *Pass) (workflows.DisruptionDecision, bool) {
	cs := Consolidatable(p, true)
	if len(cs) < 2 {
		return workflows.DisruptionDecision{}, false
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Node.Name
	}
	try := func(k int) solver.RemovalResult { return p.Simulate(names[:k]) }
	lo, hi := 1, len(names) // lo: known feasible or 1
	var best solver.RemovalResult
	bestK := 0
	for lo <= hi {
		mid := (lo + hi) / 2
		if mid < 2 {
			lo = 2
			continue
		}
		if r := try(mid); r.Possible {
			best, bestK, lo = r, mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	for k := bestK + 1; k <= min(bestK+3, len(names)); k++ {
		if r := try(k); r.Possible {
			best, bestK = r, k
		}
	}
	if bestK < 2 {
		return workflows.DisruptionDecision{}, false
	}
	return workflows.DisruptionDecision{Method: workflows.MethodMultiNode, Reason: workflows.ReasonUnderused, Nodes: names[:bestK],
		Replace: true, SavingUSDPerHour: best.SavingUSDPerHour,
		Why: fmt.Sprintf("%d of %d candidates fit on the rest%s, saving %.4f USD/hour", bestK, len(names), replacementNote(best), best.SavingUSDPerHour)}, true
}

// singleNode takes the first consolidatable candidate whose pods fit on
// the rest plus at most one cheaper node; a spot node is replaced by spot
// only with MinCheaperSpotTypes cheaper types to choose from.
func singleNode(p *Pass) (workflows.DisruptionDecision, bool) {
	for _, c := range Consolidatable(p, false) {
		r := p.Simulate([]string{c.Node.Name})
		if !r.Possible {
			continue
		}
		if r.Replacement != nil && c.Node.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot && replacementIsSpot(r.Replacement) {
			if cheaper := cheaperTypes(r.Replacement, c.Price); cheaper < MinCheaperSpotTypes {
				continue
			}
		}
		return workflows.DisruptionDecision{Method: workflows.MethodSingleNode, Reason: workflows.ReasonUnderused, Nodes: []string{c.Node.Name},
			Replace: true, SavingUSDPerHour: r.SavingUSDPerHour,
			Why: fmt.Sprintf("pods fit on the rest%s, saving %.4f USD/hour", replacementNote(r), r.SavingUSDPerHour)}, true
	}
	return workflows.DisruptionDecision{}, false
}

// Recheck is a decision's validation before any simulation: every node
// still a candidate (do-not-disrupt may have appeared) and empty nodes
// still empty. final: the verdict stands (an invalid one, or a valid
// emptiness); otherwise Resimulated judges a fresh simulation.
func Recheck(d workflows.DisruptionDecision, cands []Candidate) (v workflows.Validation, final bool) {
	byName := map[string]Candidate{}
	for _, c := range cands {
		byName[c.Node.Name] = c
	}
	for _, n := range d.Nodes {
		c, ok := byName[n]
		if !ok {
			return workflows.Validation{Why: "node " + n + " is no longer a candidate (do-not-disrupt, PDB, nomination or gone)"}, true
		}
		if d.Method == workflows.MethodEmptiness && c.Pods > 0 {
			return workflows.Validation{Why: "node " + n + " is no longer empty"}, true
		}
	}
	if d.Method == workflows.MethodEmptiness {
		return workflows.Validation{Valid: true}, true
	}
	return workflows.Validation{}, false
}

// Resimulated says whether a consolidation still holds given a fresh
// simulation of removing its nodes: still possible, and saving at least
// 95% of what was decided.
func Resimulated(d workflows.DisruptionDecision, r solver.RemovalResult) workflows.Validation {
	if !r.Possible {
		return workflows.Validation{Why: "no longer possible: " + r.Reason}
	}
	if r.SavingUSDPerHour < d.SavingUSDPerHour*0.95 {
		return workflows.Validation{Why: fmt.Sprintf("saving fell from %.4f to %.4f USD/hour", d.SavingUSDPerHour, r.SavingUSDPerHour)}
	}
	return workflows.Validation{Valid: true}
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
	case workflows.ReasonEmpty:
		return BudgetReasonEmpty
	case workflows.ReasonDrifted:
		return BudgetReasonDrifted
	case workflows.ReasonUnderused:
		return BudgetReasonUnderutilized
	}
	return ""
}

func replacementIsSpot(n *solver.NewNodeClaim) bool {
	return len(n.InstanceTypes) > 0 && solver.CheapestOffering(n.InstanceTypes[0].Offerings).CapacityType == apiv1.CapacityTypeSpot
}

func cheaperTypes(n *solver.NewNodeClaim, than float64) int {
	c := 0
	for _, it := range n.InstanceTypes {
		if solver.CheapestOffering(it.Offerings).Price < than {
			c++
		}
	}
	return c
}

func replacementNote(r solver.RemovalResult) string {
	if r.Replacement == nil {
		return ""
	}
	return fmt.Sprintf(" plus one %s", r.Replacement.InstanceTypes[0].Type.Name)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
