package disruption

import (
	"fmt"
	"math"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// The Balanced consolidation policy (Karpenter v1.14+,
// pkg/controllers/disruption/balanced.go, designs/balanced-consolidation.md):
// a consolidation move (delete or replace some nodes) is approved only when
//
//	score = (saving / pool cost) / (disruption / pool disruption) >= 1/k, k = 2
//
// per NodePool of the move whose policy is Balanced. saving is the move's
// net saving (the nodes' prices less the replacement's, USD/hour; split
// between the pools by their share of the removed nodes' price when a move
// spans pools), disruption the summed DisruptionCost of the pool's removed
// nodes, and the pool totals are over all the pool's nodes, candidates or
// not. Both sides are fractions of the pool, so the verdict does not
// depend on the pool's size. A move with no saving scores 0; an empty
// node's delete costs 1 (the per-node base) and passes; emptiness itself
// is never scored. In a uniform pool a replacement must save at least half
// the node's price per pod-share of disruption.

// BalancedK is Karpenter's k: a move passes at score >= 1/BalancedK.
const BalancedK = 2

// PoolTotals are a NodePool's sums over all its nodes.
type PoolTotals struct {
	USDPerHour     float64 // Σ node price
	DisruptionCost float64 // Σ node RescheduleDisruptionCost
}

// Score is one pool's verdict on a move.
type Score struct {
	Pool string
	// SavingUSDPerHour and DisruptionCost are the move's, for this pool.
	SavingUSDPerHour, DisruptionCost float64
	Totals                           PoolTotals
	// SavingsFraction = SavingUSDPerHour / Totals.USDPerHour;
	// DisruptionFraction = DisruptionCost / Totals.DisruptionCost. Both 0
	// when the totals are unknown (the move is then rejected).
	SavingsFraction, DisruptionFraction float64
}

// ScoreMove scores a move's saving and disruption against a pool's totals.
func ScoreMove(pool string, saving, disruption float64, totals PoolTotals) Score {
	s := Score{Pool: pool, SavingUSDPerHour: saving, DisruptionCost: disruption, Totals: totals}
	if totals.USDPerHour <= 0 || totals.DisruptionCost <= 0 {
		return s
	}
	s.SavingsFraction = saving / totals.USDPerHour
	s.DisruptionFraction = disruption / totals.DisruptionCost
	return s
}

// Value is the score: SavingsFraction / DisruptionFraction; 0 with no
// saving, +Inf for a saving without disruption.
func (s Score) Value() float64 {
	if s.SavingsFraction <= 0 {
		return 0
	}
	if s.DisruptionFraction == 0 {
		return math.Inf(1)
	}
	return s.SavingsFraction / s.DisruptionFraction
}

// Threshold is 1/BalancedK.
func (Score) Threshold() float64 { return 1.0 / BalancedK }

// Approved reports whether the score clears the threshold.
func (s Score) Approved() bool { return s.Value() >= s.Threshold() }

// String is the verdict as Karpenter's ConsolidationApproved/Rejected
// events word it, with the pool's figures.
func (s Score) String() string {
	op := ">="
	if !s.Approved() {
		op = "<"
	}
	if s.Totals.USDPerHour <= 0 || s.Totals.DisruptionCost <= 0 {
		return fmt.Sprintf("NodePool %s: score 0.00 < threshold %.2f (the pool's cost or disruption total is unknown)", s.Pool, s.Threshold())
	}
	return fmt.Sprintf("NodePool %s: score %.2f %s threshold %.2f (k: %d, savings %.1f%% of %.4f USD/hour, disruption %.1f%% of %.2f)",
		s.Pool, s.Value(), op, s.Threshold(), BalancedK, s.SavingsFraction*100, s.Totals.USDPerHour, s.DisruptionFraction*100, s.Totals.DisruptionCost)
}

// Approve scores a move that removes cands and saves saving USD/hour net
// against totals (by NodePool): every Balanced pool among the candidates'
// must approve; other policies always do. why is the first rejection
// (empty when approved); scores holds one Score per Balanced pool, in the
// order the pools first appear among cands.
func Approve(cands []Candidate, saving float64, totals map[string]PoolTotals) (ok bool, why string, scores []Score) {
	var order []string
	price, cost := map[string]float64{}, map[string]float64{}
	source := 0.0
	for _, c := range cands {
		name := c.Pool.Name
		if _, seen := price[name]; !seen {
			if c.Pool.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyBalanced {
				order = append(order, name)
			}
			price[name] = 0
		}
		price[name] += c.Price
		cost[name] += c.DisruptionCost()
		source += c.Price
	}
	ok = true
	for _, name := range order {
		s := saving
		if len(price) > 1 && source > 0 {
			s = saving * price[name] / source
		}
		sc := ScoreMove(name, s, cost[name], totals[name])
		scores = append(scores, sc)
		if !sc.Approved() && ok {
			ok, why = false, sc.String()
		}
	}
	return ok, why, scores
}

// CanPassThreshold reports whether deleting the candidate outright (the
// best a move of it can do: a replacement only lowers the saving) would
// be approved; candidates of other policies, or of a pool whose totals
// are unknown, always can. Single-node consolidation skips the others
// without simulating them.
func CanPassThreshold(c Candidate, totals map[string]PoolTotals) bool {
	if c.Pool.Spec.Disruption.ConsolidationPolicy != apiv1.ConsolidationPolicyBalanced {
		return true
	}
	t, ok := totals[c.Pool.Name]
	if !ok || t.USDPerHour <= 0 {
		return true
	}
	return ScoreMove(c.Pool.Name, c.Price, c.DisruptionCost(), t).Approved()
}
