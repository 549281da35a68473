package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/solver"
)

// Ledger is the pending-pod ledger these activities write and the
// controller reads (made on first use from Cluster, State, Log and
// NominationWindow).
func (a *world) Ledger() *capacity.Ledger {
	a.ledgerOnce.Do(func() {
		a.ledger = capacity.NewLedger(a.State, a.Log, a.Cluster.ProvisionablePods, a.liveNominations, a.nominationWindow)
	})
	return a.ledger
}

// rememberOutcome records a plan's outcome in the ledger by pod UID.
func (a *Provisioning) rememberOutcome(ctx context.Context, plan solver.Plan, snap *snapshot, now time.Time) {
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
	a.Ledger().Record(ctx, unsched, existing, now)
}
