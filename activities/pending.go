package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/solver"
)

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
	a.ledger.Record(ctx, unsched, existing, now)
}
