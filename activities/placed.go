package activities

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/solver"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
)

// placedWriters bounds the concurrent writes that follow one plan's
// placements on existing capacity.
const placedWriters = 16

// placedWriteTimeout bounds one such write to a NodeClaim.
const placedWriteTimeout = 10 * time.Second

// pointTimeout bounds the background writing of one plan's pointers.
const pointTimeout = time.Minute

// followPlacements makes the plan's placements on existing capacity stick,
// so that the next plan does not place the same pods again and no other
// pod takes their room:
//   - a pod placed on a NodeClaim still booting joins its nominees
//     (capacity.AnnotationNominatedPods), as the pods it was launched for;
//   - a pod placed on a Ready Node is pointed at it (status.nominatedNodeName,
//     in the background: the plan's NodeClaims launch first). The
//     kube-scheduler tries that Node first and keeps the pod's room there,
//     rather than spreading it by its scores onto the nodes whose room
//     the plans keep for other pods, and the pod is held for it
//     (capacity.Waits.Held) instead of being planned again; not with
//     --scheduler-hints=false.
//
// A write that fails is logged: the pod is planned again next round.
func (a *Provisioning) followPlacements(ctx context.Context, log *zap.Logger, plan solver.Plan, snap *snapshot) {
	joins := map[string][]string{} // booting claim -> pod UIDs
	var points []capacity.Hint
	for _, pl := range plan.ExistingPlacements {
		p := snap.podsByKey[pl.Pod]
		if p == nil {
			continue
		}
		if claim, ok := strings.CutPrefix(pl.Node, "nodeclaim/"); ok {
			joins[claim] = append(joins[claim], string(p.UID))
		} else if p.Status.NominatedNodeName != pl.Node {
			// A pointer it has is one that no longer holds (it would
			// be Held, not planned): the plan's place replaces it.
			points = append(points, capacity.Hint{Pod: p, Node: pl.Node})
		}
	}
	a.joinClaims(ctx, log, joins)
	if len(points) > 0 && a.snapshots.nominations.Hints() {
		go a.point(log, points)
	}
}

// joinClaims adds pods to booting NodeClaims' nominees, one merge patch
// per claim guarded by its resourceVersion (a concurrent writer makes it
// read the claim again).
func (a *Provisioning) joinClaims(ctx context.Context, log *zap.Logger, joins map[string][]string) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(placedWriters)
	for _, claim := range slices.Sorted(maps.Keys(joins)) {
		uids := joins[claim]
		g.Go(func() error {
			wctx, cancel := context.WithTimeout(gctx, placedWriteTimeout)
			defer cancel()
			if err := a.joinClaim(wctx, claim, uids); err != nil && !apierrors.IsNotFound(err) {
				log.Warn("pods not nominated to the booting nodeclaim they were placed on", zap.String("nodeclaim", claim),
					zap.Int("pods", len(uids)), zap.Error(err))
			}
			return nil
		})
	}
	_ = g.Wait()
}

// joinClaim appends uids to one claim's nominees.
func (a *Provisioning) joinClaim(ctx context.Context, claim string, uids []string) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		nc, err := a.cluster.NodeClaim(ctx, claim)
		if err != nil {
			return err
		}
		if nc.DeletionTimestamp != nil || nc.Status.NodeName != "" {
			return nil // going, or registered meanwhile: the pods are planned again
		}
		joined := joinUIDs(nc.Annotations[capacity.AnnotationNominatedPods], uids)
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": nc.ResourceVersion,
			"annotations":     map[string]string{capacity.AnnotationNominatedPods: strings.Join(joined, ",")},
		}})
		if err != nil {
			return err
		}
		return a.cluster.PatchNodeClaim(ctx, claim, patch)
	})
}

// point writes the pointers of pods placed on Ready nodes.
func (a *Provisioning) point(log *zap.Logger, hints []capacity.Hint) {
	ctx, cancel := context.WithTimeout(context.Background(), pointTimeout)
	defer cancel()
	written := 0
	var failed error
	capacity.WriteHints(ctx, a.cluster, hints, func(_ capacity.Hint, err error) {
		switch {
		case err == nil:
			written++
		case !capacity.PointerMoot(err):
			failed = err
		}
	})
	log.Info("pods placed on existing nodes pointed at them", zap.Int("pods", written), zap.Int("placed", len(hints)), zap.NamedError("lastError", failed))
}

// joinUIDs appends uids to a comma-separated list, each once, in order
// (a Ready claim's nominees count against its room in this order).
func joinUIDs(list string, uids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, uid := range append(strings.Split(list, ","), uids...) {
		if uid != "" && !seen[uid] {
			seen[uid] = true
			out = append(out, uid)
		}
	}
	return out
}
