package activities

import (
	"context"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/disruption"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionEmpty on a NodeClaim is the emptiness clock (as Karpenter's
// v1beta1 NodeClaims had it): True since its lastTransitionTime, the moment
// a consolidation pass first found the node without reschedulable pods;
// removed once the node holds such pods again or stops being a candidate.
// Kept on the object, it reads the same on every replica and after a
// restart of every worker, and consolidateAfter counts from it.
const ConditionEmpty = "Empty"

// emptySince returns the Empty condition's time, if True.
func emptySince(nc *apiv1.NodeClaim) (time.Time, bool) {
	for _, c := range nc.Status.Conditions {
		if c.Type == ConditionEmpty && c.Status == metav1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// ceilSecond rounds up to the second a condition's time can hold, so a
// stored clock never says empty for longer than it was (the replica that
// starts a clock uses the exact time until it reads the condition back).
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

// trackEmptiness returns since when each empty candidate node (by node
// name) has been empty, starting the clock of newly empty ones and
// stopping that of every other NodeClaim. Writes happen only on those
// transitions, each a status patch conditioned on the cached
// resourceVersion; a write that fails is retried next pass, the clock held
// in this replica's memory meanwhile.
func (a *Activities) trackEmptiness(ctx context.Context, cands []disruption.Candidate, now time.Time) map[string]time.Time {
	a.empty.mu.Lock()
	defer a.empty.mu.Unlock()
	if a.empty.since == nil {
		a.empty.since = map[string]time.Time{}
	}
	out := map[string]time.Time{}
	emptyClaims := map[string]bool{}
	for _, c := range cands {
		if c.Pods > 0 {
			continue
		}
		emptyClaims[c.Claim.Name] = true
		if since, ok := emptySince(c.Claim); ok {
			delete(a.empty.since, c.Claim.Name)
			out[c.Node.Name] = since
			continue
		}
		since, ok := a.empty.since[c.Claim.Name]
		if !ok {
			since = now
			a.empty.since[c.Claim.Name] = since
		}
		a.writeEmpty(ctx, c.Claim, ceilSecond(since))
		out[c.Node.Name] = since
	}
	for _, nc := range a.Cluster.NodeClaims() {
		if emptyClaims[nc.Name] {
			continue
		}
		delete(a.empty.since, nc.Name)
		if _, ok := emptySince(nc); ok && nc.DeletionTimestamp == nil {
			a.writeEmpty(ctx, nc, time.Time{})
		}
	}
	for name := range a.empty.since {
		if !emptyClaims[name] {
			delete(a.empty.since, name)
		}
	}
	return out
}

// writeEmpty sets the Empty condition True since since, or removes it
// (since zero), keeping every other condition.
func (a *Activities) writeEmpty(ctx context.Context, nc *apiv1.NodeClaim, since time.Time) {
	conds := make([]metav1.Condition, 0, len(nc.Status.Conditions)+1)
	for _, c := range nc.Status.Conditions {
		if c.Type != ConditionEmpty {
			conds = append(conds, c)
		}
	}
	if !since.IsZero() {
		conds = append(conds, metav1.Condition{Type: ConditionEmpty, Status: metav1.ConditionTrue, Reason: "Empty",
			Message: "no reschedulable pods", LastTransitionTime: metav1.NewTime(since)})
	}
	patch := mustJSON(map[string]interface{}{
		"metadata": map[string]interface{}{"resourceVersion": nc.ResourceVersion},
		"status":   map[string]interface{}{"conditions": conds},
	})
	err := a.Cluster.PatchNodeClaimStatus(ctx, nc.Name, patch)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		a.logger(ctx).Warn("emptiness clock not written (kept in this replica)", zap.String("nodeclaim", nc.Name), zap.Error(err))
	}
}
