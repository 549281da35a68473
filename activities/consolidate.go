package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// CheckDisruptionCandidates re-checks a decision's nodes together, right
// before the Consolidate saga acts: each as CheckDisruptionCandidate does
// (it exists, Joinery launched it, neither it nor a pod on it is
// do-not-disrupt, no bare pod), and their NodePools' budgets for all of
// them at once, nodes already being disrupted counted.
func (a *Disruption) CheckDisruptionCandidates(ctx context.Context, r workflows.CandidatesRequest) (workflows.CandidateSet, error) {
	var set workflows.CandidateSet
	now := time.Now()
	room := disruption.Room{}
	for _, n := range r.Nodes {
		c, err := a.CheckDisruptionCandidate(ctx, workflows.DisruptInput{NodeName: n, Reason: r.Reason, SkipBudgets: true})
		if err != nil {
			return set, err
		}
		if c.OK {
			np := a.pools.nodePool(c.NodePool)
			if why := room.Take(c.NodePool, np, a.pools.nodeCount(c.NodePool, ""), r.Reason, now); why != "" {
				c = workflows.Candidate{Why: why}
			}
		}
		c.NodeName = n
		if !c.OK && !r.Partial && set.Why == "" {
			set.Why = "node " + n + ": " + c.Why
		}
		set.Candidates = append(set.Candidates, c)
	}
	return set, nil
}

// RecheckConsolidation is the saving re-checked just before acting: with
// the decision's nodes tainted, a fresh simulation of removing them must
// still hold the decision to its shape and price (disruption.Resimulated).
func (a *Disruption) RecheckConsolidation(ctx context.Context, d saga.DisruptionDecision) (saga.Validation, error) {
	// The tainted nodes go back in before the capacity buffers are placed,
	// so their virtual pods are placed as they were and must move too.
	pools, invalid := a.cluster.NodePools()
	snap, skipped := a.snapshots.buildWith(time.Now(), pools, a.cluster.NodeClass, func(s *snapshot) { a.addRemovedAsBefore(s, d.Nodes) })
	a.pools.report(ctx, pools, append(invalid, skipped...))
	a.snapshots.priceNodes(snap)
	a.addRemoved(snap, d.Nodes)
	r := solver.SimulateRemoval(snap.input, d.Nodes)
	v := disruption.Resimulated(d, r)
	outcome := "rechecked"
	if !v.Valid {
		outcome = "aborted"
		a.metrics.DisruptionValidationFailed(metrics.ConsolidationType(d.Method))
	} else {
		// Acted on from here: tainted, its replacement launched next.
		a.metrics.DisruptionActed(decisionKind(d), d.Reason, metrics.ConsolidationType(d.Method), a.poolsOf(d.Nodes))
	}
	a.metrics.DisruptionDecision(d.Reason, outcome)
	activityLogger(ctx, a.log).Info("consolidation re-checked before acting", zap.Strings("nodes", d.Nodes), zap.Bool("valid", v.Valid),
		zap.String("why", v.Why), zap.Float64("nodesUsdPerHour", r.CandidatesUSDPerHour))
	return v, nil
}

// addRemoved puts nodes the snapshot left out (tainted disrupted: no pod
// may go there) back as existing nodes with their price, so the simulation
// can remove them and count what they cost.
func (a *Disruption) addRemoved(snap *snapshot, nodes []string) {
	have := map[string]bool{}
	for _, n := range snap.input.ExistingNodes {
		have[n.Name] = true
	}
	for _, name := range nodes {
		if have[name] {
			continue
		}
		node, err := a.cluster.Nodes.Get(name)
		if err != nil {
			continue // gone: the simulation says so
		}
		snap.input.ExistingNodes = append(snap.input.ExistingNodes, solver.Node{Name: name, Labels: node.Labels, Taints: node.Spec.Taints,
			NodePool: node.Labels[apiv1.LabelNodePool], Price: a.prices.Node(node)})
	}
}

// addRemovedAsBefore is addRemoved with each node as it was before its
// taint: its free capacity and its other taints, so the capacity buffers'
// virtual pods are placed on it as in the decision's snapshot.
func (a *Disruption) addRemovedAsBefore(snap *snapshot, nodes []string) {
	n0 := len(snap.input.ExistingNodes)
	a.addRemoved(snap, nodes)
	for i := n0; i < len(snap.input.ExistingNodes); i++ {
		n := &snap.input.ExistingNodes[i]
		node, err := a.cluster.Nodes.Get(n.Name)
		if err != nil {
			continue
		}
		alloc, _ := resources.FromResourceList(node.Status.Allocatable)
		cn, _ := a.cluster.CSINodes.Get(n.Name)
		alloc[resources.EBSVolumes] = solver.EBSLimit(cn)
		n.Available = alloc.Sub(snap.used[n.Name])
		var taints []corev1.Taint
		for _, t := range n.Taints {
			if t.Key != apiv1.TaintKeyDisrupted {
				taints = append(taints, t)
			}
		}
		n.Taints = taints
	}
}

// CreateReplacement writes the NodeClaim object of a consolidation's
// replacement exactly as the decision planned it (instance types,
// requirements, requests; the pool's template for the rest) and returns
// its saga's input with the planned offerings. A retry first deletes what
// an earlier attempt wrote.
func (a *Disruption) CreateReplacement(ctx context.Context, r workflows.ReplacementRequest) (workflows.NodeClaimInput, error) {
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil {
		return workflows.NodeClaimInput{}, err
	}
	plan := r.Replacement
	np := a.pools.nodePool(plan.NodePool)
	if np == nil {
		return workflows.NodeClaimInput{}, temporal.NewNonRetryableApplicationError("NodePool "+plan.NodePool+" is gone", workflows.ErrReplacementFailed, nil)
	}
	if len(plan.InstanceTypes) == 0 || len(plan.Offerings) == 0 {
		return workflows.NodeClaimInput{}, temporal.NewNonRetryableApplicationError("replacement plan has no instance types or offerings", workflows.ErrReplacementFailed, nil)
	}
	requests := corev1.ResourceList{}
	for name, v := range plan.Requests {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return workflows.NodeClaimInput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("replacement plan requests.%s: %v", name, err), workflows.ErrReplacementFailed, err)
		}
		requests[corev1.ResourceName(name)] = q
	}
	reqs := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(plan.Requirements))
	for _, q := range plan.Requirements {
		reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: q.Key, Operator: q.Operator, Values: q.Values, MinValues: q.MinValues})
	}
	nc, err := a.claims.create(ctx, np, claimSpec{batch: batch, labels: np.Spec.Template.ObjectMeta.Labels, reqs: reqs,
		types: plan.InstanceTypes, requests: requests})
	if err != nil {
		return workflows.NodeClaimInput{}, err
	}
	if err := a.cluster.WaitNodeClaimsCached(ctx, []string{nc.Name}, cacheWait); err != nil {
		return workflows.NodeClaimInput{}, err
	}
	a.metrics.NodeClaimCreatedBy(np.Name, saga.ReasonUnderused, false)
	activityLogger(ctx, a.log).Info("replacement created as planned", zap.String("nodeclaim", nc.Name), zap.Strings("for", r.For),
		zap.Strings("instanceTypes", plan.InstanceTypes), zap.Float64("usdPerHour", plan.USDPerHour), zap.Float64("maxUsdPerHour", plan.MaxUSDPerHour))
	in := a.claims.sagaInput(nc.Name, np.Name, plan.Offerings, plan.Pods)
	in.Private = in.Private || r.Private
	return in, nil
}
