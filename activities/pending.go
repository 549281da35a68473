package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/sharedstate"
	"github.com/joinery/joinery/solver"
)

// UnschedulableRetry is how long a pod the solver could place nowhere is
// left alone before it is planned again (unless a NodePool changes).
const UnschedulableRetry = 5 * time.Minute

// UnnominatedPending counts pending unschedulable pods that no live
// NodeClaim was launched for and that were not just found unschedulable:
// the pods a new Provision batch would work on.
func (a *Activities) UnnominatedPending(now time.Time) int {
	return a.pendingCount(now, false)
}

// PendingToPlan is UnnominatedPending without the pods the last plans
// placed on existing nodes within the nomination window: the
// kube-scheduler binds those at its own pace, and counting them made the
// provisioner run a Provision every resync that only placed them again
// (10,000 pods: 20 of 46 Provision workflows).
func (a *Activities) PendingToPlan(now time.Time) int {
	return a.pendingCount(now, true)
}

func (a *Activities) pendingCount(now time.Time, skipOnExisting bool) int {
	pending := a.Cluster.ProvisionablePods()
	nominated := a.liveNominations(pending, now)
	window := a.nominationWindow()
	n := 0
	for _, p := range pending {
		uid := string(p.UID)
		if _, ok := nominated[uid]; ok {
			continue
		}
		if at, ok := a.memo.Lookup(sharedstate.KindUnschedulable, uid); ok && now.Sub(at) < UnschedulableRetry {
			continue
		}
		if skipOnExisting {
			if at, ok := a.memo.Lookup(sharedstate.KindOnExisting, uid); ok && now.Sub(at) < window {
				continue
			}
		}
		n++
	}
	return n
}

// ForgetUnschedulable lets every pod be planned again (a NodePool's spec
// changed): a marker in the shared memo voids every earlier entry on every
// replica. The write happens in the background (it is called from an
// informer handler).
func (a *Activities) ForgetUnschedulable() {
	now := time.Now()
	k, v := a.memo.Forget(now)
	if a.State != nil {
		go a.persistMemo(context.Background(), map[string]string{k: v}, nil, now)
	}
}

// rememberOutcome records, by pod UID, when a plan found a pod no place
// and when it placed one on an existing node, here and in the shared memo;
// entries past their window are dropped.
func (a *Activities) rememberOutcome(ctx context.Context, plan solver.Plan, snap *snapshot, now time.Time) {
	var unsched, existing []string
	for _, u := range plan.Unschedulable {
		if p := snap.podsByKey[u.Pod]; p != nil {
			unsched = append(unsched, string(p.UID))
		}
	}
	for _, pl := range plan.ExistingPlacements {
		if p := snap.podsByKey[pl.Pod]; p != nil {
			existing = append(existing, string(p.UID))
		}
	}
	set := map[string]string{}
	if k, v := a.memo.Record(sharedstate.KindUnschedulable, unsched, now, a.writer); k != "" {
		set[k] = v
	}
	if k, v := a.memo.Record(sharedstate.KindOnExisting, existing, now, a.writer); k != "" {
		set[k] = v
	}
	expired := a.memo.Expire(now, a.memoRetention())
	a.persistMemo(ctx, set, expired, now)
}
