package activities

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"
)

// balancedPoolTotals sums, for each NodePool of a candidate whose policy is
// Balanced, the price and the disruption cost (disruption.
// RescheduleDisruptionCost of its reschedulable pods) of all the pool's
// nodes, candidates or not (Karpenter's computeNodePoolTotals). Nil when
// no candidate's pool is Balanced.
func (a *Disruption) balancedPoolTotals(cands []disruption.Candidate) map[string]disruption.PoolTotals {
	var out map[string]disruption.PoolTotals
	for _, c := range cands {
		if c.Pool.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyBalanced {
			if out == nil {
				out = map[string]disruption.PoolTotals{}
			}
			out[c.Pool.Name] = disruption.PoolTotals{}
		}
	}
	if out == nil {
		return nil
	}
	nodes, _ := a.cluster.Nodes.List(labels.Everything())
	for _, n := range nodes {
		pool := n.Labels[apiv1.LabelNodePool]
		t, ok := out[pool]
		if !ok {
			continue
		}
		var costs []float64
		for _, p := range a.cluster.PodsOnNode(n.Name) {
			if reschedulable(p) {
				costs = append(costs, disruption.PodEvictionCost(p))
			}
		}
		t.USDPerHour += a.prices.Node(n)
		t.DisruptionCost += disruption.RescheduleDisruptionCost(costs)
		out[pool] = t
	}
	return out
}

// consolidationScored records a Balanced score (metric, debug log).
func (a *Disruption) consolidationScored(s disruption.Score) {
	a.metrics.ConsolidationScored(s.Pool, s.Value(), s.Approved())
	a.log.Debug("consolidation score", zap.String("nodepool", s.Pool), zap.Float64("score", s.Value()),
		zap.Bool("approved", s.Approved()), zap.String("verdict", s.String()))
}
