package activities

import (
	"time"

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
	a.unschedMu.Lock()
	defer a.unschedMu.Unlock()
	n := 0
	for _, p := range pending {
		if _, ok := nominated[string(p.UID)]; ok {
			continue
		}
		if at, ok := a.unschedulable[string(p.UID)]; ok && now.Sub(at) < UnschedulableRetry {
			continue
		}
		if at, ok := a.onExisting[string(p.UID)]; ok && skipOnExisting && now.Sub(at) < a.nominationWindow() {
			continue
		}
		n++
	}
	return n
}

// ForgetUnschedulable lets every pod be planned again (a NodePool changed).
func (a *Activities) ForgetUnschedulable() {
	a.unschedMu.Lock()
	a.unschedulable, a.onExisting = nil, nil
	a.unschedMu.Unlock()
}

// rememberOutcome records, by pod UID, when a plan found a pod no place
// and when it placed one on an existing node; entries past their window
// are dropped.
func (a *Activities) rememberOutcome(plan solver.Plan, snap *snapshot, now time.Time) {
	a.unschedMu.Lock()
	defer a.unschedMu.Unlock()
	if a.unschedulable == nil {
		a.unschedulable, a.onExisting = map[string]time.Time{}, map[string]time.Time{}
	}
	for uid, at := range a.unschedulable {
		if now.Sub(at) >= UnschedulableRetry {
			delete(a.unschedulable, uid)
		}
	}
	for uid, at := range a.onExisting {
		if now.Sub(at) >= a.nominationWindow() {
			delete(a.onExisting, uid)
		}
	}
	for _, u := range plan.Unschedulable {
		if p := snap.podsByKey[u.Pod]; p != nil {
			a.unschedulable[string(p.UID)] = now
		}
	}
	for _, pl := range plan.ExistingPlacements {
		if p := snap.podsByKey[pl.Pod]; p != nil {
			a.onExisting[string(p.UID)] = now
		}
	}
}
