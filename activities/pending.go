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
		n++
	}
	return n
}

// ForgetUnschedulable lets every pod be planned again (a NodePool changed).
func (a *Activities) ForgetUnschedulable() {
	a.unschedMu.Lock()
	a.unschedulable = nil
	a.unschedMu.Unlock()
}

func (a *Activities) rememberUnschedulable(plan solver.Plan, snap *snapshot, now time.Time) {
	a.unschedMu.Lock()
	defer a.unschedMu.Unlock()
	if a.unschedulable == nil {
		a.unschedulable = map[string]time.Time{}
	}
	for _, u := range plan.Unschedulable {
		if p := snap.podsByKey[u.Pod]; p != nil {
			a.unschedulable[string(p.UID)] = now
		}
	}
}
