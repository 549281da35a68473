// Package disruption holds the pure rules of voluntary disruption, over
// plain structs the consolidation activity builds from its caches: which
// nodes are candidates (Candidates), when a pass may decide at all
// (Unsettled), the methods in order and what each takes (Decide:
// emptiness, drift, expiration, multi-node and single-node consolidation,
// with candidates ordered by Consolidatable), the budget accounting
// (Allowed, Active), drift (NodePoolHash, NodeClassHash, Drift) and the
// re-validation of a decision (Recheck, Resimulated). No I/O and no wall
// clock: times come from the caller (the workflow's clock), and removal
// is simulated through the Pass's Simulate function.
package disruption

import (
	"fmt"
	"math"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/robfig/cron/v3"
)

// Budget reasons as Karpenter names them in spec.disruption.budgets[].reasons.
const (
	BudgetReasonEmpty         = "Empty"
	BudgetReasonDrifted       = "Drifted"
	BudgetReasonUnderutilized = "Underutilized"
)

// DefaultBudget applies when a NodePool lists none (Karpenter's default).
var DefaultBudget = apiv1.Budget{Nodes: "10%"}

// Allowed returns how many of a pool's nodes may be disrupted at once for a
// budget reason at time now (UTC): the minimum over the active budgets
// that apply to the reason. A percentage is of poolNodes, rounded up. A
// budget with a schedule (cron, UTC) is active for its duration after each
// scheduled time; without one it is always active. Nodes already being
// disrupted count against the result (the caller subtracts them).
func Allowed(budgets []apiv1.Budget, reason string, poolNodes int, now time.Time) (int, error) {
	if len(budgets) == 0 {
		budgets = []apiv1.Budget{DefaultBudget}
	}
	allowed := math.MaxInt
	for i, b := range budgets {
		if len(b.Reasons) > 0 && !contains(b.Reasons, reason) {
			continue
		}
		active, err := Active(b, now)
		if err != nil {
			return 0, fmt.Errorf("budgets[%d]: %w", i, err)
		}
		if !active {
			continue
		}
		n, pct, err := apiv1.ParseBudgetNodes(b.Nodes)
		if err != nil {
			return 0, fmt.Errorf("budgets[%d].nodes: %w", i, err)
		}
		if pct {
			n = int(math.Ceil(float64(n) * float64(poolNodes) / 100))
		}
		allowed = min(allowed, n)
	}
	if allowed == math.MaxInt {
		allowed = poolNodes
	}
	return allowed, nil
}

// Active reports whether a budget is in force at now: always without a
// schedule; with one, during [t, t+duration) for every scheduled time t.
func Active(b apiv1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil {
		return true, nil
	}
	if b.Duration == nil {
		return false, fmt.Errorf("schedule %q needs a duration", *b.Schedule)
	}
	sched, err := cron.ParseStandard(*b.Schedule)
	if err != nil {
		return false, fmt.Errorf("schedule %q: %w", *b.Schedule, err)
	}
	now = now.UTC()
	// Active if some scheduled time t satisfies now-duration < t <= now.
	next := sched.Next(now.Add(-b.Duration.Duration)) // first scheduled time after now-duration
	return !next.After(now), nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
