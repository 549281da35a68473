package controller

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/pending"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// provisioner batches unschedulable pods and runs one Provision workflow at
// a time (like Karpenter's singleton provisioner), so a batch always sees
// the NodeClaims of the previous one.
type provisioner struct {
	cluster  *kube.Cluster
	ledger   *capacity.Ledger
	headroom headroomChecker
	temporal client.Client
	metrics  *metrics.Metrics
	log      *zap.Logger
	idle     time.Duration
	max      time.Duration
	trigger  chan struct{}
	seq      atomic.Int64
	// lastBuffer is when a Provision last ran for capacity buffers
	// short of room (bufferRetry apart while they stay short).
	lastBuffer time.Time
}

// headroomChecker places the capacity buffers' virtual pods on existing
// capacity (activities.Headroom).
type headroomChecker interface {
	CheckHeadroom(ctx context.Context) int
	ForgetBufferUnschedulable()
}

// bufferRetry is how long a capacity buffer that stays short of room
// after a Provision (limits, no offering) waits before the next one.
const bufferRetry = 10 * time.Second

// headroomShort is how many virtual pods of the capacity buffers existing
// capacity cannot hold (activities.Headroom.CheckHeadroom: also their
// status and metrics), 0 within bufferRetry of the last Provision run for
// them.
func (p *provisioner) headroomShort(ctx context.Context) int {
	n := p.headroom.CheckHeadroom(ctx)
	if n == 0 || time.Since(p.lastBuffer) < bufferRetry {
		return 0
	}
	p.lastBuffer = time.Now()
	return n
}

func (p *provisioner) watch() {
	_, _ = p.cluster.PodInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if pod, ok := obj.(*corev1.Pod); ok && kube.IsProvisionable(pod) {
				p.kick()
			}
		},
		UpdateFunc: func(o, n interface{}) {
			old, _ := o.(*corev1.Pod)
			pod, _ := n.(*corev1.Pod)
			if pending.NewlyProvisionable(old, pod) {
				p.kick()
			}
		},
	})
	// A NodePool whose spec changed may now take pods found unschedulable
	// before (status writes and the informer's first list do not count:
	// the memo survives restarts).
	p.cluster.OnNodePoolChange(func(interface{}) { p.kick() })
	p.cluster.OnNodePoolSpecChange(p.ledger.ForgetUnschedulable)
	p.cluster.OnNodePoolSpecChange(p.headroom.ForgetBufferUnschedulable)
	// A CapacityBuffer created or changed may need capacity.
	p.cluster.OnCapacityBufferChange(p.kick)
	// So may a NodePool whose EC2NodeClass became Ready.
	p.cluster.OnNodeClassReadyChange(func() {
		p.ledger.ForgetUnschedulable()
		p.headroom.ForgetBufferUnschedulable()
		p.kick()
	})
}

func (p *provisioner) kick() {
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

// resyncInterval is how often the provisioner looks for pending pods no
// event announced: pods released by a failed or deleted NodeClaim, pods
// whose nomination lapsed (their claim's Ready node has no room for them).
const resyncInterval = 2 * time.Second

func (p *provisioner) run(ctx context.Context) error {
	resync := time.NewTicker(resyncInterval)
	defer resync.Stop()
	for {
		short, checked := 0, false
		select {
		case <-ctx.Done():
			return nil
		case <-p.trigger:
		case <-resync.C:
			// Capacity buffers need their own trigger: no pod is pending
			// when real pods took their space.
			short, checked = p.headroomShort(ctx), true
			if p.ledger.PendingToPlan(time.Now()) == 0 && short == 0 {
				continue
			}
		}
		if !p.batch(ctx) {
			return nil
		}
		pending := p.ledger.PendingToPlan(time.Now())
		p.metrics.SetPodsPending(pending)
		if pending == 0 && !checked {
			short = p.headroomShort(ctx)
		}
		if pending == 0 && short == 0 {
			continue
		}
		if pending == 0 {
			p.log.Info("capacity buffers short of room: provisioning for them", zap.Int("virtualPods", short))
		}
		if err := p.provision(ctx, pending); err != nil {
			p.log.Error("provisioning failed", zap.Error(err))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(2 * time.Second):
			}
		}
	}
}

// batch waits until no pod event has arrived for the idle window or the
// max window has passed. It returns false when ctx ended.
func (p *provisioner) batch(ctx context.Context) bool {
	deadline := time.NewTimer(p.max)
	defer deadline.Stop()
	for {
		idle := time.NewTimer(p.idle)
		select {
		case <-ctx.Done():
			idle.Stop()
			return false
		case <-p.trigger:
			idle.Stop()
		case <-idle.C:
			return true
		case <-deadline.C:
			idle.Stop()
			return true
		}
	}
}

func (p *provisioner) provision(ctx context.Context, pending int) error {
	start := time.Now()
	batch := fmt.Sprintf("%s-%d", start.UTC().Format("20060102-150405"), p.seq.Add(1))
	id := workflows.ProvisionWorkflowID(batch)
	run, err := p.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
		workflows.ProvisionWorkflow, workflows.ProvisionInput{BatchID: batch, PendingPods: pending})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	var res workflows.ProvisionResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	p.metrics.ObserveProvision(time.Since(start).Seconds())
	p.log.Info("provisioned", zap.String("workflow", id), zap.Int("nodeclaims", len(res.NodeClaims)),
		zap.Int("podsPlaced", res.PodsPlaced), zap.Int("unschedulable", res.Unschedulable), zap.Duration("took", time.Since(start)))
	return nil
}
