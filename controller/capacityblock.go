package controller

import (
	"context"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
)

// capacityBlockEvery is how often the capacity block watcher looks
// (Karpenter's expiration controller: every minute).
const capacityBlockEvery = 15 * time.Second

// interruptionStarter starts an Interruption workflow (once per
// instance and kind).
type interruptionStarter interface {
	StartInterruption(ctx context.Context, in workflows.InterruptionInput) (bool, error)
}

// capacityBlockWatcher drains the nodes of capacity blocks that are
// expiring, as Karpenter's capacityreservation.expiration controller
// deletes their NodeClaims: EC2 sends no event Karpenter listens to, so
// the watcher starts the Interruption of each such node itself, kind
// capacity_block_expiring, with the block's reclaim as the notice end:
// the node is cordoned, replaced and drained, as for a spot warning.
type capacityBlockWatcher struct {
	cl     *kube.Cluster
	start  interruptionStarter
	period time.Duration // Config.CapacityBlockExpiration
	log    *zap.Logger
}

func (w *capacityBlockWatcher) run(ctx context.Context) {
	t := time.NewTicker(capacityBlockEvery)
	defer t.Stop()
	for {
		w.check(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check starts the Interruption of every node of an expiring block.
func (w *capacityBlockWatcher) check(ctx context.Context, now time.Time) {
	classOf := func(name string) *apiv1.EC2NodeClass {
		cls, _ := w.cl.NodeClass(name)
		return cls
	}
	for _, n := range nodeclass.ExpiringBlockNodes(w.cl.NodeClaims(), classOf, now, w.period) {
		started, err := w.start.StartInterruption(ctx, workflows.InterruptionInput{
			EventID: "capacity-block-expiring/" + n.ReservationID, Kind: saga.KindCapacityBlockExpiring,
			InstanceID: n.InstanceID, Time: now.UTC(), NoticeEnd: n.Deadline, Action: "terminate",
		})
		if err != nil {
			w.log.Warn("could not start the drain of a capacity block's node", zap.String("nodeclaim", n.NodeClaim), zap.Error(err))
			continue
		}
		if started {
			w.log.Info("capacity block expiring: draining its node", zap.String("nodeclaim", n.NodeClaim),
				zap.String("reservation", n.ReservationID), zap.Time("deadline", n.Deadline))
		}
	}
}
