package activities

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/cluster"
	"github.com/joinery/joinery/disruption"
	"github.com/joinery/joinery/nodeclass"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxConsolidationCandidates bounds multi-node consolidation (as Karpenter).
const maxConsolidationCandidates = 100

// minCheaperSpotTypes: a spot node is replaced by spot only when at least
// this many cheaper types remain, so consolidation does not chase the
// price-capacity-optimized allocation.
const minCheaperSpotTypes = 15

// candidate is a node voluntary disruption may take.
type candidate struct {
	node  *corev1.Node
	claim *apiv1.NodeClaim
	pool  *apiv1.NodePool
	price float64 // USD/hour
	pods  int     // reschedulable pods
}

// emptyTracker holds emptiness clocks (by NodeClaim, workflow time) not yet
// seen on the NodeClaim's Empty condition (see trackEmptiness).
type emptyTracker struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// ComputeDisruption makes one consolidation pass's decision at workflow
// time p.Now. Methods in order, the first that finds something acts:
// emptiness (empty longer than consolidateAfter), drift (the NodePool or
// EC2NodeClass hash stamped at launch differs), expiration (older than
// expireAfter), multi-node then single-node consolidation (solver
// SimulateRemoval). Budgets limit each method per NodePool. Nothing is
// decided while pods are pending or NodeClaims are launching.
func (a *Activities) ComputeDisruption(ctx context.Context, p workflows.DisruptionPass) (workflows.DisruptionDecision, error) {
	d, err := a.computeDisruption(ctx, p.Now)
	if err == nil && a.private() {
		for _, n := range d.Nodes {
			d.NodeRefs = append(d.NodeRefs, a.Pseudonym(n))
		}
	}
	if err == nil && a.Metrics != nil {
		a.Metrics.DisruptionEligibleNodes.Set(float64(d.Eligible))
		if d.Method != "" {
			a.Metrics.DisruptionDecisions.WithLabelValues(d.Reason, "proposed").Inc()
		}
	}
	if err == nil && d.Method != "" {
		a.logger(ctx).Info("disruption decision", zap.String("method", d.Method), zap.Strings("nodes", d.Nodes),
			zap.Float64("savingUsdPerHour", d.SavingUSDPerHour), zap.String("why", d.Why))
	}
	return d, err
}

func (a *Activities) computeDisruption(ctx context.Context, now time.Time) (workflows.DisruptionDecision, error) {
	snap, err := a.takeSnapshot(ctx, time.Now())
	if err != nil {
		return workflows.DisruptionDecision{}, err
	}
	a.priceNodes(snap)
	d := workflows.DisruptionDecision{USDPerHour: clusterPrice(snap)}
	if n := a.UnnominatedPending(time.Now()); n > 0 {
		// Pods the solver found no place for do not count: they would
		// block consolidation forever.
		d.Why = fmt.Sprintf("not quiet: %d pods pending", n)
		return d, nil
	}
	for _, nc := range a.Cluster.NodeClaims() {
		if !initialized(nc) {
			d.Why = "not quiet: nodeclaim " + nc.Name + " is launching"
			return d, nil
		}
	}
	cands := a.candidates(now)
	d.Eligible = len(cands)
	for _, c := range cands {
		if len(d.Candidates) < 10 {
			d.Candidates = append(d.Candidates, c.node.Name)
		}
	}
	since := a.trackEmptiness(ctx, cands, now)
	emptiness := func(cands []candidate, now time.Time, _ *snapshot) (workflows.DisruptionDecision, bool) {
		return a.emptiness(cands, now, since)
	}
	for _, method := range []func([]candidate, time.Time, *snapshot) (workflows.DisruptionDecision, bool){
		emptiness, a.drift, a.expiration, a.multiNode, a.singleNode,
	} {
		if dec, ok := method(cands, now, snap); ok {
			dec.USDPerHour, dec.Eligible, dec.Candidates = d.USDPerHour, d.Eligible, d.Candidates
			return dec, nil
		}
	}
	d.Why = fmt.Sprintf("nothing to do among %d candidates", len(cands))
	return d, nil
}

// candidates lists nodes voluntary disruption may take: launched by
// Joinery and initialized, not already disrupted, not annotated (nor any
// pod) do-not-disrupt, not holding nominations for pending pods, no pod
// behind a PodDisruptionBudget that allows no disruption, and no pod that
// no controller owns (evicting it would lose it, as kubectl drain warns).
func (a *Activities) candidates(now time.Time) []candidate {
	pdbs, _ := a.Cluster.PDBs.List(labels.Everything())
	var out []candidate
	for _, nc := range a.Cluster.NodeClaims() {
		if nc.Status.NodeName == "" || nc.DeletionTimestamp != nil || !initialized(nc) || a.nominationLive(nc, time.Now()) {
			continue
		}
		node, err := a.Cluster.Nodes.Get(nc.Status.NodeName)
		if err != nil || hasTaint(node.Spec.Taints, apiv1.TaintKeyDisrupted) || node.Annotations[apiv1.AnnotationDoNotDisrupt] == "true" {
			continue
		}
		pool := a.nodePool(nc.Labels[apiv1.LabelNodePool])
		if pool == nil {
			continue
		}
		c := candidate{node: node, claim: nc, pool: pool, price: a.nodePrice(node)}
		ok := true
		for _, p := range a.Cluster.PodsOnNode(node.Name) {
			if !cluster.IsActive(p) {
				continue
			}
			if p.Annotations[apiv1.AnnotationDoNotDisrupt] == "true" {
				ok = false
				break
			}
			if !reschedulable(p) {
				continue
			}
			if !hasController(p) {
				ok = false // a bare pod would be lost: nothing recreates it
				break
			}
			c.pods++
			for _, pdb := range pdbs {
				if pdb.Namespace == p.Namespace && pdb.Status.DisruptionsAllowed == 0 && selects(pdb.Spec.Selector, p.Labels) {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// emptiness takes the empty candidates whose clock (since) has run past
// their pool's consolidateAfter, as budgets allow.
func (a *Activities) emptiness(cands []candidate, now time.Time, since map[string]time.Time) (workflows.DisruptionDecision, bool) {
	var nodes []string
	room := map[string]int{}
	for _, c := range cands {
		if c.pods > 0 {
			continue
		}
		s, ok := since[c.node.Name]
		if !ok {
			continue
		}
		after, err := apiv1.ParseNillableDuration(orDefault(c.pool.Spec.Disruption.ConsolidateAfter, "0s"))
		if err != nil || after == nil || now.Sub(s) < *after {
			continue
		}
		if !a.takeBudget(room, c.pool, workflows.ReasonEmpty, now) {
			continue
		}
		nodes = append(nodes, c.node.Name)
	}
	if len(nodes) == 0 {
		return workflows.DisruptionDecision{}, false
	}
	return workflows.DisruptionDecision{Method: workflows.MethodEmptiness, Reason: workflows.ReasonEmpty, Nodes: nodes,
		Why: fmt.Sprintf("%d node(s) empty for longer than consolidateAfter", len(nodes))}, true
}

func (a *Activities) drift(cands []candidate, now time.Time, _ *snapshot) (workflows.DisruptionDecision, bool) {
	room := map[string]int{}
	for _, c := range cands {
		cls, err := a.Cluster.NodeClass(c.pool.Spec.Template.Spec.NodeClassRef.Name)
		if err != nil {
			cls = nil
		}
		_, why := disruption.Drift(c.claim, c.pool, cls, nodeclass.LaunchedFrom(c.claim))
		if why != "" && a.takeBudget(room, c.pool, workflows.ReasonDrifted, now) {
			return workflows.DisruptionDecision{Method: workflows.MethodDrift, Reason: workflows.ReasonDrifted, Nodes: []string{c.node.Name},
				Replace: true, Why: "drifted: " + why}, true
		}
	}
	return workflows.DisruptionDecision{}, false
}

func (a *Activities) expiration(cands []candidate, now time.Time, _ *snapshot) (workflows.DisruptionDecision, bool) {
	for _, c := range cands {
		exp := c.claim.Spec.ExpireAfter
		if exp == "" {
			exp = c.pool.Spec.Template.Spec.ExpireAfter
		}
		d, err := apiv1.ParseNillableDuration(orDefault(exp, "Never"))
		if err != nil || d == nil {
			continue
		}
		if age := now.Sub(c.claim.CreationTimestamp.Time); age >= *d {
			return workflows.DisruptionDecision{Method: workflows.MethodExpiration, Reason: workflows.ReasonExpired, Nodes: []string{c.node.Name},
				Replace: true, Why: fmt.Sprintf("expired: %s old, expireAfter %s", age.Round(time.Second), exp)}, true
		}
	}
	return workflows.DisruptionDecision{}, false
}

// consolidatable returns the candidates consolidation may act on, most
// expensive per pod first (Karpenter's disruption-cost order). The budget
// is applied in that order: for a multi-node command (multi) each pool
// gives as many candidates as it has room for; for single-node every
// candidate of a pool with room is a choice (one is taken per pass), so a
// 1-node budget does not pin the search to the first candidate by name.
func (a *Activities) consolidatable(cands []candidate, now time.Time, multi bool) []candidate {
	var out []candidate
	for _, c := range cands {
		if c.pool.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyWhenEmpty {
			continue
		}
		after, err := apiv1.ParseNillableDuration(orDefault(c.pool.Spec.Disruption.ConsolidateAfter, "0s"))
		if err != nil || after == nil || now.Sub(initializedAt(c.claim)) < *after {
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := out[i].price/float64(1+out[i].pods), out[j].price/float64(1+out[j].pods)
		if ci != cj {
			return ci > cj
		}
		return out[i].node.Name < out[j].node.Name
	})
	room := map[string]int{}
	kept := out[:0]
	for _, c := range out {
		if multi {
			if !a.takeBudget(room, c.pool, workflows.ReasonUnderused, now) {
				continue
			}
		} else if !a.hasBudget(room, c.pool, now) {
			continue
		}
		kept = append(kept, c)
	}
	out = kept
	if len(out) > maxConsolidationCandidates {
		out = out[:maxConsolidationCandidates]
	}
	return out
}

// hasBudget reports whether the pool can disrupt one more node as
// underutilized now (room caches the pools' budgets for the pass).
func (a *Activities) hasBudget(room map[string]int, np *apiv1.NodePool, now time.Time) bool {
	if !a.takeBudget(room, np, workflows.ReasonUnderused, now) {
		return false
	}
	room[np.Name+"/"+workflows.ReasonUnderused]++ // give it back: only one is taken per pass
	return true
}

// multiNode binary-searches the longest prefix of candidates whose pods fit
// on the rest plus at most one cheaper node, then checks the prefixes just
// above it linearly (the feasibility is not strictly monotone).
func (a *Activities) multiNode(cands []candidate, now time.Time, snap *snapshot) (workflows.DisruptionDecision, bool) {
	cs := a.consolidatable(cands, now, true)
	if len(cs) < 2 {
		return workflows.DisruptionDecision{}, false
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.node.Name
	}
	try := func(k int) solver.RemovalResult { return solver.SimulateRemoval(snap.input, names[:k]) }
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

func (a *Activities) singleNode(cands []candidate, now time.Time, snap *snapshot) (workflows.DisruptionDecision, bool) {
	for _, c := range a.consolidatable(cands, now, false) {
		r := solver.SimulateRemoval(snap.input, []string{c.node.Name})
		if !r.Possible {
			continue
		}
		if r.Replacement != nil && c.node.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot && replacementIsSpot(r.Replacement) {
			if cheaper := cheaperTypes(r.Replacement, c.price); cheaper < minCheaperSpotTypes {
				continue
			}
		}
		return workflows.DisruptionDecision{Method: workflows.MethodSingleNode, Reason: workflows.ReasonUnderused, Nodes: []string{c.node.Name},
			Replace: true, SavingUSDPerHour: r.SavingUSDPerHour,
			Why: fmt.Sprintf("pods fit on the rest%s, saving %.4f USD/hour", replacementNote(r), r.SavingUSDPerHour)}, true
	}
	return workflows.DisruptionDecision{}, false
}

// ValidateDisruption re-simulates a decision after the validation delay and
// says whether it still holds: every node still a candidate (do-not-disrupt
// may have appeared), empty nodes still empty, and a consolidation still
// possible and saving money.
func (a *Activities) ValidateDisruption(ctx context.Context, d workflows.DisruptionDecision) (workflows.Validation, error) {
	v, err := a.validate(ctx, d)
	if err == nil && a.Metrics != nil {
		outcome := "valid"
		if !v.Valid {
			outcome = "dropped"
		}
		a.Metrics.DisruptionDecisions.WithLabelValues(d.Reason, outcome).Inc()
	}
	return v, err
}

func (a *Activities) validate(ctx context.Context, d workflows.DisruptionDecision) (workflows.Validation, error) {
	cands := a.candidates(time.Now())
	byName := map[string]candidate{}
	for _, c := range cands {
		byName[c.node.Name] = c
	}
	for _, n := range d.Nodes {
		c, ok := byName[n]
		if !ok {
			return workflows.Validation{Why: "node " + n + " is no longer a candidate (do-not-disrupt, PDB, nomination or gone)"}, nil
		}
		if d.Method == workflows.MethodEmptiness && c.pods > 0 {
			return workflows.Validation{Why: "node " + n + " is no longer empty"}, nil
		}
	}
	if d.Method == workflows.MethodEmptiness {
		return workflows.Validation{Valid: true}, nil
	}
	snap, err := a.takeSnapshot(ctx, time.Now())
	if err != nil {
		return workflows.Validation{}, err
	}
	a.priceNodes(snap)
	r := solver.SimulateRemoval(snap.input, d.Nodes)
	if !r.Possible {
		return workflows.Validation{Why: "no longer possible: " + r.Reason}, nil
	}
	if r.SavingUSDPerHour < d.SavingUSDPerHour*0.95 {
		return workflows.Validation{Why: fmt.Sprintf("saving fell from %.4f to %.4f USD/hour", d.SavingUSDPerHour, r.SavingUSDPerHour)}, nil
	}
	return workflows.Validation{Valid: true}, nil
}

// takeBudget reserves one disruption in the pool's budget for this pass.
func (a *Activities) takeBudget(room map[string]int, np *apiv1.NodePool, reason string, now time.Time) bool {
	key := np.Name + "/" + reason
	left, ok := room[key]
	if !ok {
		allowed, disrupting, err := a.budgetRoom(np, reason, now, "")
		if err != nil {
			a.Log.Warn("disruption budget", zap.String("nodepool", np.Name), zap.Error(err))
			return false
		}
		left = allowed - disrupting
	}
	if left <= 0 {
		room[key] = 0
		return false
	}
	room[key] = left - 1
	return true
}

// priceNodes sets each existing node's price (USD/hour) for SimulateRemoval.
func (a *Activities) priceNodes(snap *snapshot) {
	for i := range snap.input.ExistingNodes {
		n := &snap.input.ExistingNodes[i]
		if node, err := a.Cluster.Nodes.Get(n.Name); err == nil {
			n.Price = a.nodePrice(node)
		}
	}
}

func clusterPrice(snap *snapshot) float64 {
	total := 0.0
	for _, n := range snap.input.ExistingNodes {
		total += n.Price
	}
	return total
}

// nodePrice is the catalog price of a node's instance type and capacity type (USD/hour).
func (a *Activities) nodePrice(n *corev1.Node) float64 {
	it, ok := a.Catalog.Get(n.Labels[apiv1.LabelInstanceType])
	if !ok {
		return 0
	}
	if n.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot {
		return it.SpotPrice()
	}
	return it.OnDemandPrice
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

func initialized(nc *apiv1.NodeClaim) bool { return !initializedAt(nc).IsZero() }

func initializedAt(nc *apiv1.NodeClaim) time.Time {
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionInitialized && c.Status == "True" {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
