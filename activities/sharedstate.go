package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
)

// sharedStateWriteTimeout bounds one write of shared state; a write that
// fails is logged and the state stays in this replica's memory.
const sharedStateWriteTimeout = 10 * time.Second

// sharedState is what every replica must see and what must outlive every
// worker: the ICE cache and the pending-pod ledger, kept in the ConfigMaps
// of state (nil: this process's memory only).
type sharedState struct {
	state  *kube.StateStore
	ice    *aws.ICECache
	log    *zap.Logger
	ledger *capacity.Ledger
	market *catalog.Market // learned node memory
}

// bind makes the ICE cache and the pending-pod memo the same on every
// replica and across restarts: marks and plan outcomes are written to the
// ConfigMaps of state, and what any replica writes there is merged in
// here. Call it before state starts, so the first copies are read.
func (a sharedState) bind() {
	if a.state == nil {
		return
	}
	a.state.OnChange(sharedstate.OfferingCacheConfigMap, func(data map[string]string) {
		until, _ := sharedstate.DecodeOfferings(data)
		in := make(map[aws.OfferingKey]time.Time, len(until))
		for o, t := range until {
			in[aws.OfferingKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType}] = t
		}
		a.ice.Merge(in)
	})
	a.ledger.Bind()
	a.ice.OnMark(a.persistICE)
	if a.market != nil {
		a.state.OnChange(sharedstate.NodeMemoryConfigMap, func(data map[string]string) {
			learned, _ := sharedstate.DecodeNodeMemory(data)
			a.market.MergeNodeMemory(learned)
		})
		a.market.OnLearnNodeMemory(a.persistNodeMemory)
	}
}

// persistNodeMemory shares a node memory this replica learned. Two
// replicas writing one key at once may leave the larger of two real
// nodes' values there; each keeps its own smaller one.
func (a sharedState) persistNodeMemory(key string, bytes int64) {
	k, v, ok := sharedstate.NodeMemoryEntry(key, bytes)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedStateWriteTimeout)
	defer cancel()
	if _, err := a.state.Put(ctx, sharedstate.NodeMemoryConfigMap, map[string]string{k: v}, nil, nil); err != nil {
		a.log.Warn("learned node memory not shared (kept in this replica)", zap.String("key", key), zap.Error(err))
	}
}

// persistICE writes ICE marks to the shared offering cache.
func (a sharedState) persistICE(marked map[aws.OfferingKey]time.Time) {
	set := make(map[string]string, len(marked))
	for o, t := range marked {
		if o.PlacementGroup != "" {
			continue // a group's marks stay in this replica: the shared format has no group
		}
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
	if _, err := a.state.Put(ctx, sharedstate.OfferingCacheConfigMap, set, nil, func(data map[string]string) []string {
		return sharedstate.ExpiredOfferings(data, now)
	}); err != nil {
		a.log.Warn("insufficient-capacity marks not shared (kept in this replica)", zap.Int("offerings", len(set)), zap.Error(err))
	}
}
