package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/aws"
	"go.uber.org/zap"
)

// sharedStateWriteTimeout bounds one write of shared state; a write that
// fails is logged and the state stays in this replica's memory.
const sharedStateWriteTimeout = 10 * time.Second

// BindSharedState makes the ICE cache and the pending-pod memo the same on
// every replica and across restarts: marks and plan outcomes are written to
// the ConfigMaps of a.State, and what any replica writes there is merged in
// here. Call it before a.State.Start, so the first copies are read. With
// a.State nil both stay in this process's memory.
func (a *world) BindSharedState() {
	if a.State == nil {
		return
	}
	a.State.OnChange(sharedstate.OfferingCacheConfigMap, func(data map[string]string) {
		until, _ := sharedstate.DecodeOfferings(data)
		in := make(map[aws.OfferingKey]time.Time, len(until))
		for o, t := range until {
			in[aws.OfferingKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType}] = t
		}
		a.ICE.Merge(in)
	})
	a.Ledger().Bind()
	a.ICE.OnMark(a.persistICE)
}

// persistICE writes ICE marks to the shared offering cache.
func (a *world) persistICE(marked map[aws.OfferingKey]time.Time) {
	set := make(map[string]string, len(marked))
	for o, t := range marked {
		if k, ok := sharedstate.OfferingKey(sharedstate.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType}); ok {
			set[k] = sharedstate.FormatTime(t)
		}
	}
	if len(set) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedStateWriteTimeout)
	defer cancel()
	now := time.Now()
	if _, err := a.State.Put(ctx, sharedstate.OfferingCacheConfigMap, set, nil, func(data map[string]string) []string {
		return sharedstate.ExpiredOfferings(data, now)
	}); err != nil {
		a.Log.Warn("insufficient-capacity marks not shared (kept in this replica)", zap.Int("offerings", len(set)), zap.Error(err))
	}
}
