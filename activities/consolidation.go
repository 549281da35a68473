package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
)

// ComputeDisruption makes one consolidation pass's decision at workflow
// time p.Now: it reads the caches into a disruption.Pass and lets
// disruption.Decide choose (see there for the methods and their order).
// Nothing is decided while pods are pending or NodeClaims are launching.
func (a *Disruption) ComputeDisruption(ctx context.Context, p workflows.DisruptionPass) (saga.DisruptionDecision, error) {
	start := time.Now()
	d, err := a.computeDisruption(ctx, p)
	if err == nil {
		a.metrics.ObserveDisruptionEvaluation(d.Reason, metrics.ConsolidationType(d.Method), time.Since(start).Seconds())
	}
	if err == nil && d.Blocked != nil && p.Reported != "" && d.Blocked.Digest() == p.Reported {
		d.Blocked, d.BlockedUnchanged = nil, true // the workflow holds this report already
	}
	if err == nil && a.pseudonym != nil {
		for _, n := range d.Nodes {
			d.NodeRefs = append(d.NodeRefs, a.pseudonym(n))
		}
	}
	if err == nil {
		a.metrics.SetDisruptionEligible(d.Eligible)
		if d.Method != "" {
			a.metrics.DisruptionDecision(d.Reason, "proposed")
		}
		if d.Method == saga.MethodDrift {
			// Drift is acted on as decided (no validation delay).
			a.metrics.DisruptionActed(decisionKind(d), d.Reason, "", a.poolsOf(d.Nodes))
		}
	}
	if err == nil && d.Method != "" {
		activityLogger(ctx, a.log).Info("disruption decision", zap.String("method", d.Method), zap.Strings("nodes", d.Nodes),
			zap.Float64("savingUsdPerHour", d.SavingUSDPerHour), zap.String("why", d.Why))
	}
	return d, err
}

func (a *Disruption) computeDisruption(ctx context.Context, p workflows.DisruptionPass) (saga.DisruptionDecision, error) {
	now := p.Now
	snap, err := a.snapshots.take(ctx, time.Now())
	if err != nil {
		return saga.DisruptionDecision{}, err
	}
	a.snapshots.priceNodes(snap)
	usd, list := solver.NodesPrice(snap.input.ExistingNodes, true), a.listPrice(snap)
	claims := withBuffers(a.disruptionClaims(ctx, now), snap)
	cands, blocked := disruption.Filter(claims)
	// Pods the solver found no place for do not count: they would block
	// consolidation forever.
	if why := disruption.Unsettled(a.ledger.UnnominatedPending(time.Now()), a.cluster.NodeClaims()); why != "" {
		d := saga.DisruptionDecision{USDPerHour: usd, ListUSDPerHour: list, Why: why, Catalog: a.catalogStatus()}
		a.reportBlocked(ctx, &d, claims, blocked)
		return d, nil
	}
	trace := &disruption.Trace{}
	pass := &disruption.Pass{
		Now: now, Candidates: cands,
		Pools:      a.poolNodes(cands),
		Simulate:   trace.Wrap(solver.NewRemovalSimulator(snap.input).Simulate),
		SpotToSpot: a.spotToSpot,
		OnBudgetError: func(pool string, err error) {
			a.log.Warn("disruption budget", zap.String("nodepool", pool), zap.Error(err))
		},
		PoolTotals:     a.balancedPoolTotals(cands),
		OnScore:        a.consolidationScored,
		DriftNotBefore: p.DriftNotBefore,
	}
	a.metrics.SetEligibleByReason(disruption.EligibleByReason(pass))
	a.setAllowedDisruptions(now)
	sim := time.Now()
	d := disruption.Decide(pass)
	if d.Method == saga.MethodMultiNode || d.Method == saga.MethodSingleNode || d.Method == "" {
		a.metrics.Scheduled(metrics.ControllerDisruption, time.Since(sim).Seconds(), 0)
	}
	d.USDPerHour, d.ListUSDPerHour, d.Catalog = usd, list, a.catalogStatus()
	a.reportBlocked(ctx, &d, claims, disruption.Merge(blocked, disruption.PassBlocks(pass, d, trace)))
	return d, nil
}

// withBuffers sets each claim's BufferPods: the virtual pods the snapshot
// placed on its node.
func withBuffers(claims []disruption.Claim, snap *snapshot) []disruption.Claim {
	for i := range claims {
		if nc := claims[i].Claim; nc != nil && nc.Status.NodeName != "" {
			claims[i].BufferPods = snap.bufferOnNode[nc.Status.NodeName]
		}
	}
	return claims
}

// poolNodes counts the nodes of each candidate's NodePool and those of
// them being disrupted, for the budgets.
func (a *Disruption) poolNodes(cands []disruption.Candidate) map[string]disruption.PoolNodes {
	out := map[string]disruption.PoolNodes{}
	for _, c := range cands {
		if _, ok := out[c.Pool.Name]; !ok {
			out[c.Pool.Name] = a.pools.nodeCount(c.Pool.Name, "")
		}
	}
	return out
}

// ValidateDisruption re-simulates a decision after the validation delay and
// says whether it still holds (disruption.Recheck, disruption.Resimulated).
func (a *Disruption) ValidateDisruption(ctx context.Context, d saga.DisruptionDecision) (saga.Validation, error) {
	v, err := a.validate(ctx, d)
	if err == nil {
		outcome := "valid"
		if !v.Valid {
			outcome = "dropped"
			a.metrics.DisruptionValidationFailed(metrics.ConsolidationType(d.Method))
		}
		a.metrics.DisruptionDecision(d.Reason, outcome)
	}
	return v, err
}

func (a *Disruption) validate(ctx context.Context, d saga.DisruptionDecision) (saga.Validation, error) {
	snap, err := a.snapshots.take(ctx, time.Now())
	if err != nil {
		return saga.Validation{}, err
	}
	cands := disruption.Candidates(withBuffers(a.disruptionClaims(ctx, time.Now()), snap))
	if why := disruption.ConsolidateAfterRecheck(d, cands, time.Now()); why != "" {
		return saga.Validation{Why: why}, nil
	}
	if v, final := disruption.Recheck(d, cands); final {
		return v, nil
	}
	a.snapshots.priceNodes(snap)
	return disruption.Resimulated(d, solver.SimulateRemoval(snap.input, d.Nodes)), nil
}

// decisionKind is Karpenter's decision label: replace when the decision
// launches capacity first, else delete.
func decisionKind(d saga.DisruptionDecision) string {
	if d.Replace || d.Replacement != nil {
		return "replace"
	}
	return "delete"
}

// setAllowedDisruptions sets karpenter_nodepools_allowed_disruptions for
// every valid NodePool and budget reason at now (Karpenter's reason
// values: Empty, Drifted, Underutilized).
func (a *Disruption) setAllowedDisruptions(now time.Time) {
	if a.metrics == nil {
		return
	}
	pools, _ := a.cluster.NodePools()
	for _, np := range pools {
		nodes := a.pools.nodeCount(np.Name, "").Nodes
		for _, reason := range []string{disruption.BudgetReasonEmpty, disruption.BudgetReasonDrifted, disruption.BudgetReasonUnderutilized} {
			if n, err := disruption.Allowed(np.Spec.Disruption.Budgets, reason, nodes, now); err == nil {
				a.metrics.SetAllowedDisruptions(np.Name, reason, n)
			}
		}
	}
}

// listPrice is Joinery's nodes at their list prices, NodeOverlays aside
// (without overlays: the price priceNodes set).
func (a *Disruption) listPrice(snap *snapshot) float64 {
	if set, _, _ := a.prices.Overlays(""); set == nil {
		return solver.NodesPrice(snap.input.ExistingNodes, true)
	}
	total := 0.0
	for _, n := range snap.input.ExistingNodes {
		if n.NodePool == "" {
			continue
		}
		if node, err := a.cluster.Nodes.Get(n.Name); err == nil {
			total += a.prices.List(node)
		}
	}
	return total
}

// poolsOf names the NodePool of each node (from the caches; a node gone
// is left out).
func (a *Disruption) poolsOf(nodes []string) []string {
	var out []string
	for _, n := range nodes {
		if node, err := a.cluster.Nodes.Get(n); err == nil {
			out = append(out, node.Labels[apiv1.LabelNodePool])
		}
	}
	return out
}

func (a *Disruption) catalogStatus() string {
	if a.catalogSource == nil {
		return ""
	}
	return a.catalogSource()
}
