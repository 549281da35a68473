package solver

import (
	"sort"
)

// RemovalResult answers the consolidation question for a set of candidate nodes.
type RemovalResult struct {
	// Possible is true when every movable pod of the candidates fits on the
	// remaining nodes plus at most one new node that costs less than the
	// candidates together.
	Possible bool
	// Replacement is the one new node to launch first (nil: pure deletion).
	Replacement *NewNodeClaim
	// Placements are where the candidates' pods go on remaining nodes.
	Placements []Placement
	// SavingUSDPerHour = Σ candidate Node.Price − Replacement.Price() (USD/hour).
	SavingUSDPerHour float64
	// CandidatesUSDPerHour = Σ candidate Node.Price: what a replacement
	// must cost strictly less than.
	CandidatesUSDPerHour float64
	// Reason says why it is not possible.
	Reason string
	// Pod is the pod ("namespace/name") that fits nowhere, when that is why.
	Pod string
	// NotCheaper: the pods fit, but the replacement would not cost less.
	NotCheaper bool
}

// SimulateRemoval asks: can the nodes named in candidates go away? Their
// pods (ExistingPods on them, except DaemonSet pods) become pending and are
// packed onto the other existing nodes (their Available) and at most one
// new NodeClaim from in.NodePools, honouring every constraint Solve honours
// (the candidates' other pods no longer count for topology). It is possible
// when nothing is left unschedulable, at most one node is bought and that
// node is strictly cheaper than the candidates' summed Node.Price
// (USD/hour). Every strategy of Solve is tried and the cheapest plan with at
// most one new node is kept. in.Pods are ignored (consolidation runs when
// nothing is pending). Pure and deterministic.
func SimulateRemoval(in Input, candidates []string) RemovalResult {
	return NewRemovalSimulator(in).Simulate(candidates)
}

// RemovalSimulator answers SimulateRemoval for many candidate sets over
// one input, compiling its NodePools and DaemonSets once (a consolidation
// pass asks tens of times). Its answers are SimulateRemoval's. The input
// must not change while it is used; Simulate may be called concurrently.
type RemovalSimulator struct {
	in    Input
	pools *poolSet
}

// NewRemovalSimulator prepares removal simulations over in.
func NewRemovalSimulator(in Input) *RemovalSimulator {
	return &RemovalSimulator{in: in, pools: preparePools(in)}
}

// Simulate is SimulateRemoval(in, candidates) for the simulator's input.
func (rs *RemovalSimulator) Simulate(candidates []string) RemovalResult {
	in := rs.in
	cand := map[string]bool{}
	for _, c := range candidates {
		cand[c] = true
	}
	var sim Input
	sim.NodePools, sim.DaemonSets, sim.Strategies = in.NodePools, in.DaemonSets, in.Strategies
	// The pods that stay are passed by reference: ExistingPods are large
	// structs, and copying them dominated a consolidation pass (tens of
	// simulations per pass).
	sim.ExistingNodes = make([]Node, 0, len(in.ExistingNodes))
	staying := make([]*ExistingPod, 0, len(in.ExistingPods))
	total := 0.0
	found := 0
	for _, n := range in.ExistingNodes {
		if cand[n.Name] {
			total += n.Price
			found++
			continue
		}
		sim.ExistingNodes = append(sim.ExistingNodes, n)
	}
	if found != len(cand) {
		return RemovalResult{Reason: "a candidate is not among the existing nodes", CandidatesUSDPerHour: total}
	}
	for i := range in.ExistingPods {
		ep := &in.ExistingPods[i]
		if !cand[ep.Node] {
			staying = append(staying, ep)
			continue
		}
		if !ep.Daemon {
			sim.Pods = append(sim.Pods, ep.Pod)
		}
	}
	sort.SliceStable(sim.Pods, func(i, j int) bool { return sim.Pods[i].Key() < sim.Pods[j].Key() })
	p := prepareWith(sim, rs.pools, staying)
	strategies := sim.Strategies
	if len(strategies) == 0 {
		strategies = DefaultStrategies()
	}
	var best *pass
	for _, st := range strategies {
		s := p.run(st, false)
		if len(s.unsched) > 0 || len(s.claims) > 1 {
			continue
		}
		if best == nil || s.better(best) {
			best = s
		}
	}
	if best == nil {
		s := p.run(strategies[0], true)
		if len(s.unsched) > 0 {
			return RemovalResult{Reason: "pod " + s.unsched[0].Pod + " cannot move: " + s.unsched[0].Reason, Pod: s.unsched[0].Pod, CandidatesUSDPerHour: total}
		}
		return RemovalResult{Reason: "the pods need more than one new node", CandidatesUSDPerHour: total}
	}
	plan := p.plan(best)
	res := RemovalResult{Placements: plan.ExistingPlacements, SavingUSDPerHour: total, CandidatesUSDPerHour: total}
	if len(plan.NewNodeClaims) == 1 {
		res.Replacement = &plan.NewNodeClaims[0]
		res.SavingUSDPerHour = total - res.Replacement.Price()
	}
	res.Possible = res.SavingUSDPerHour > 1e-9
	if !res.Possible {
		res.Reason, res.NotCheaper = "the replacement is not cheaper than the candidates", true
	}
	return res
}
