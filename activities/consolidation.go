package activities

import (
	"context"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/disruption"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// ComputeDisruption makes one consolidation pass's decision at workflow
// time p.Now: it reads the caches into a disruption.Pass and lets
// disruption.Decide choose (see there for the methods and their order).
// Nothing is decided while pods are pending or NodeClaims are launching.
func (a *Activities) ComputeDisruption(ctx context.Context, p workflows.DisruptionPass) (workflows.DisruptionDecision, error) {
	d, err := a.computeDisruption(ctx, p)
	if err == nil && d.Blocked != nil && p.Reported != "" && d.Blocked.Digest() == p.Reported {
		d.Blocked, d.BlockedUnchanged = nil, true // the workflow holds this report already
	}
	if err == nil && a.private() {
		for _, n := range d.Nodes {
			d.NodeRefs = append(d.NodeRefs, a.Pseudonym(n))
		}
	}
	if err == nil {
		a.Metrics.SetDisruptionEligible(d.Eligible)
		if d.Method != "" {
			a.Metrics.DisruptionDecision(d.Reason, "proposed")
		}
	}
	if err == nil && d.Method != "" {
		a.logger(ctx).Info("disruption decision", zap.String("method", d.Method), zap.Strings("nodes", d.Nodes),
			zap.Float64("savingUsdPerHour", d.SavingUSDPerHour), zap.String("why", d.Why))
	}
	return d, err
}

func (a *Activities) computeDisruption(ctx context.Context, p workflows.DisruptionPass) (workflows.DisruptionDecision, error) {
	now := p.Now
	snap, err := a.takeSnapshot(ctx, time.Now())
	if err != nil {
		return workflows.DisruptionDecision{}, err
	}
	a.priceNodes(snap)
	usd := clusterPrice(snap)
	claims := a.disruptionClaims(ctx, now)
	cands, blocked := disruption.Filter(claims)
	// Pods the solver found no place for do not count: they would block
	// consolidation forever.
	if why := disruption.Unsettled(a.Ledger().UnnominatedPending(time.Now()), a.Cluster.NodeClaims()); why != "" {
		d := workflows.DisruptionDecision{USDPerHour: usd, Why: why, Catalog: a.catalogStatus()}
		a.reportBlocked(ctx, &d, claims, blocked)
		return d, nil
	}
	trace := &disruption.Trace{}
	pass := &disruption.Pass{
		Now: now, Candidates: cands,
		Pools:      a.poolNodes(cands),
		Simulate:   trace.Wrap(solver.NewRemovalSimulator(snap.input).Simulate),
		SpotToSpot: a.SpotToSpotConsolidation,
		OnBudgetError: func(pool string, err error) {
			a.Log.Warn("disruption budget", zap.String("nodepool", pool), zap.Error(err))
		},
		PoolTotals:     a.balancedPoolTotals(cands),
		OnScore:        a.consolidationScored,
		DriftNotBefore: p.DriftNotBefore,
	}
	d := disruption.Decide(pass)
	d.USDPerHour, d.Catalog = usd, a.catalogStatus()
	a.reportBlocked(ctx, &d, claims, disruption.Merge(blocked, disruption.PassBlocks(pass, d, trace)))
	return d, nil
}

// candidates reads every NodeClaim from the caches and keeps the ones
// disruption.Candidates allows.
func (a *Activities) candidates(ctx context.Context) []disruption.Candidate {
	return disruption.Candidates(a.disruptionClaims(ctx, time.Now()))
}

// poolNodes counts the nodes of each candidate's NodePool and those of
// them being disrupted, for the budgets.
func (a *Activities) poolNodes(cands []disruption.Candidate) map[string]disruption.PoolNodes {
	out := map[string]disruption.PoolNodes{}
	for _, c := range cands {
		if _, ok := out[c.Pool.Name]; !ok {
			out[c.Pool.Name] = a.poolNodeCount(c.Pool.Name, "")
		}
	}
	return out
}

// ValidateDisruption re-simulates a decision after the validation delay and
// says whether it still holds (disruption.Recheck, disruption.Resimulated).
func (a *Activities) ValidateDisruption(ctx context.Context, d workflows.DisruptionDecision) (workflows.Validation, error) {
	v, err := a.validate(ctx, d)
	if err == nil {
		outcome := "valid"
		if !v.Valid {
			outcome = "dropped"
		}
		a.Metrics.DisruptionDecision(d.Reason, outcome)
	}
	return v, err
}

func (a *Activities) validate(ctx context.Context, d workflows.DisruptionDecision) (workflows.Validation, error) {
	cands := a.candidates(ctx)
	if why := disruption.ConsolidateAfterRecheck(d, cands, time.Now()); why != "" {
		return workflows.Validation{Why: why}, nil
	}
	if v, final := disruption.Recheck(d, cands); final {
		return v, nil
	}
	snap, err := a.takeSnapshot(ctx, time.Now())
	if err != nil {
		return workflows.Validation{}, err
	}
	a.priceNodes(snap)
	return disruption.Resimulated(d, solver.SimulateRemoval(snap.input, d.Nodes)), nil
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

// nodePrice is the price of a node's instance type and capacity type in
// its zone (USD/hour): on-demand, or the zone's spot price from the market.
func (a *Activities) nodePrice(n *corev1.Node) float64 {
	it, ok := a.instanceType(n.Labels[apiv1.LabelInstanceType])
	if !ok {
		return 0
	}
	return a.Market.Price(it, n.Labels[apiv1.LabelZone], n.Labels[apiv1.LabelCapacityType])
}
