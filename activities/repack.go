package activities

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/solver"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// A burst's pods are nominated to the NodeClaims planned for them, but
// the kube-scheduler binds in its own order: the first nodes of a wave to
// come Ready take whichever pending pods come first, and the pods
// nominated to them are left over, shaped unlike the room vacated on the
// claims still launching. Planned against those claims' leftover rooms,
// they buy new nodes the claims would have held. So when a plan buys
// while NodeClaims with no Node yet hold nominations, the batch is planned
// again with those nominations set free and the claims' whole room (as
// Karpenter simulates in-flight NodeClaims), and that plan is taken when
// it buys for less without leaving more pods unplaced.

// repack is plan, or the plan with the launching claims' nominations set
// free when that one buys for less; the claims are then nominated the
// pods it places on them.
func (a *Provisioning) repack(ctx context.Context, log *zap.Logger, snap *snapshot, plan solver.Plan) (*snapshot, solver.Plan) {
	if len(plan.NewNodeClaims) == 0 || snap.launchingNominated == 0 {
		return snap, plan
	}
	free := *a.snapshots
	free.releaseLaunching = true
	alt, err := free.take(ctx, time.Now())
	if err != nil {
		return snap, plan
	}
	alt.input.Budget = a.solverBudget
	altPlan := solver.Solve(alt.input)
	before, after := newNodesPrice(plan), newNodesPrice(altPlan)
	if len(altPlan.Unschedulable) > len(plan.Unschedulable) || after >= before-1e-9 {
		return snap, plan
	}
	moved, err := a.renominate(ctx, alt, altPlan)
	if err != nil {
		log.Warn("planning the launching NodeClaims' pods again: could not record their new nominations; keeping the first plan", zap.Error(err))
		return snap, plan
	}
	log.Info("pods nominated to launching NodeClaims planned again: the plan buys less",
		zap.Int("released", alt.released), zap.Int("nodeclaimsRenominated", moved),
		zap.Int("nodeclaimsBefore", len(plan.NewNodeClaims)), zap.Int("nodeclaimsAfter", len(altPlan.NewNodeClaims)),
		zap.Float64("usdPerHourBefore", before), zap.Float64("usdPerHourAfter", after))
	return alt, altPlan
}

func newNodesPrice(p solver.Plan) float64 {
	total := 0.0
	for _, nn := range p.NewNodeClaims {
		total += nn.Price()
	}
	return total
}

// renominate writes, on each launching NodeClaim whose nominees change,
// the pods the plan places on it, and returns how many it wrote.
func (a *Provisioning) renominate(ctx context.Context, snap *snapshot, plan solver.Plan) (int, error) {
	placed := map[string][]string{} // claim -> pod UIDs
	for _, pl := range plan.ExistingPlacements {
		name, ok := strings.CutPrefix(pl.Node, "nodeclaim/")
		if p := snap.podsByKey[pl.Pod]; ok && p != nil {
			placed[name] = append(placed[name], string(p.UID))
		}
	}
	launching := launchingClaims(a.cluster.NodeClaims(), time.Now())
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(nodeClaimWriters)
	n := 0
	for _, nc := range a.cluster.NodeClaims() {
		if !launching[nc.Name] {
			continue
		}
		old := nc.Annotations[capacity.AnnotationNominatedPods]
		uids := placed[nc.Name]
		slices.Sort(uids)
		if sameSet(old, uids) {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			capacity.AnnotationNominatedPods: strings.Join(uids, ",")}}})
		if err != nil {
			return n, err
		}
		n++
		g.Go(func() error { return a.cluster.PatchNodeClaim(gctx, nc.Name, patch) })
	}
	return n, g.Wait()
}

// sameSet says whether the comma-separated list holds exactly uids (sorted).
func sameSet(list string, uids []string) bool {
	var have []string
	if list != "" {
		have = strings.Split(list, ",")
	}
	slices.Sort(have)
	return slices.Equal(have, uids)
}
