package controller

import (
	"context"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/staticpool"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// staticPendingTTL is how long a NodeClaim this reconciler created counts
// as present while the informer cache does not show it yet.
const staticPendingTTL = 2 * time.Minute

// staticReconciler keeps every static NodePool (spec.replicas, the
// StaticCapacity gate) at its node count, leader only: each pass counts
// the pool's NodeClaims not being deleted (staticpool.Decide), creates
// the missing ones through a Provision workflow (its plan writes them, then
// their nodeclaim/<name> sagas start, which launch, register and, when
// lost, terminate them) and deletes the surplus (the
// termination saga drains it). A NodeClaim or Node deleted, an instance
// terminated behind our back or interrupted, or a drifted node replaced:
// its NodeClaim goes away and the next pass creates another.
type staticReconciler struct {
	cl  *kube.Cluster
	log *zap.Logger
	// launch makes n NodeClaims of a pool and starts their sagas (one
	// Provision workflow per pool at a time) and returns their names.
	launch  func(ctx context.Context, pool string, n int) (workflows.ProvisionResult, error)
	every   time.Duration
	trigger chan struct{}

	mu      sync.Mutex
	pending map[string]map[string]time.Time // pool -> NodeClaim -> created
}

func newStaticReconciler(cl *kube.Cluster, tc client.Client, log *zap.Logger) *staticReconciler {
	r := &staticReconciler{cl: cl, log: log.Named("static"), every: 5 * time.Second,
		launch: func(ctx context.Context, pool string, n int) (workflows.ProvisionResult, error) {
			// A pass that finds this pool's launch still running (a
			// leader that died waiting for it) joins it.
			id := workflows.StaticProvisionWorkflowID(pool)
			run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING},
				workflows.ProvisionWorkflow, workflows.ProvisionInput{BatchID: "static-" + pool, StaticPool: pool, Count: n})
			var res workflows.ProvisionResult
			if err == nil {
				err = run.Get(ctx, &res)
			}
			return res, err
		},
		trigger: make(chan struct{}, 1), pending: map[string]map[string]time.Time{}}
	poke := func() {
		select {
		case r.trigger <- struct{}{}:
		default:
		}
	}
	// A NodeClaim or Node going away, or a pool's spec changing, is looked
	// at at once; the ticker catches the rest.
	deletions := cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(o, n interface{}) {
			if ou, ok := o.(metav1.Object); ok {
				if nu, ok := n.(metav1.Object); ok && ou.GetDeletionTimestamp() == nil && nu.GetDeletionTimestamp() != nil {
					poke()
				}
			}
		},
		DeleteFunc: func(interface{}) { poke() },
	}
	cl.OnNodeClaimEvent(deletions)
	cl.OnNodeEvent(deletions)
	cl.OnNodePoolSpecChange(poke)
	return r
}

// run passes every r.every and a second after an event (several events at
// once make one pass).
func (r *staticReconciler) run(ctx context.Context) {
	reconcileLoop(ctx, r.every, r.trigger, time.Second, r.pass)
}

// pass reconciles every static pool once.
func (r *staticReconciler) pass(ctx context.Context, now time.Time) {
	pools, _ := r.cl.NodePools()
	claims := r.cl.NodeClaims()
	for _, np := range pools {
		if !np.IsStatic() || np.DeletionTimestamp != nil {
			continue
		}
		members := r.members(np.Name, claims)
		pending := r.stillPending(np.Name, members, now)
		s := staticpool.Decide(*np.Spec.Replicas, nodesLimit(np), members, pending)
		if s.Create > 0 {
			r.create(ctx, np.Name, s, now)
		}
		for _, name := range s.Delete {
			if err := r.cl.DeleteNodeClaimKeepFinalizers(ctx, name); err != nil {
				r.log.Warn("delete surplus static nodeclaim", zap.String("nodepool", np.Name), zap.String("nodeclaim", name), zap.Error(err))
				continue
			}
			r.log.Info("static nodeclaim deleted (surplus)", zap.String("nodepool", np.Name), zap.String("nodeclaim", name),
				zap.Int("want", s.Want), zap.Int("have", s.Have))
		}
	}
}

func (r *staticReconciler) create(ctx context.Context, pool string, s staticpool.Scale, now time.Time) {
	res, err := r.launch(ctx, pool, s.Create)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("static nodepool launch", zap.String("nodepool", pool), zap.Int("want", s.Want), zap.Int("have", s.Have), zap.Error(err))
		}
		return
	}
	r.mu.Lock()
	if r.pending[pool] == nil {
		r.pending[pool] = map[string]time.Time{}
	}
	for _, name := range res.NodeClaims {
		r.pending[pool][name] = now
	}
	r.mu.Unlock()
	r.log.Info("static nodeclaims launching", zap.String("nodepool", pool), zap.Strings("nodeclaims", res.NodeClaims),
		zap.Int("want", s.Want), zap.Int("have", s.Have), zap.Int("short", res.Unschedulable))
}

// members are the pool's NodeClaims as staticpool sees them.
func (r *staticReconciler) members(pool string, claims []*apiv1.NodeClaim) []staticpool.Member {
	var out []staticpool.Member
	for _, nc := range claims {
		if nc.Labels[apiv1.LabelNodePool] != pool {
			continue
		}
		m := staticpool.Member{Name: nc.Name, Deleting: nc.DeletionTimestamp != nil || staticpool.Terminating(nc),
			Ready: disruption.Initialized(nc), Created: nc.CreationTimestamp.Time}
		if n := nc.Status.NodeName; n != "" {
			if node, err := r.cl.Nodes.Get(n); err == nil && node.DeletionTimestamp != nil {
				m.Deleting = true
			}
			for _, p := range r.cl.PodsOnNode(n) {
				if !kube.IsDaemonSetPod(p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					m.Pods++
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// stillPending forgets the created NodeClaims the cache now shows (or
// that are older than staticPendingTTL) and counts the rest.
func (r *staticReconciler) stillPending(pool string, members []staticpool.Member, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range members {
		seen[m.Name] = true
	}
	for name, at := range r.pending[pool] {
		if seen[name] || now.Sub(at) > staticPendingTTL {
			delete(r.pending[pool], name)
		}
	}
	return len(r.pending[pool])
}

// nodesLimit is the pool's limits.nodes (-1: none).
func nodesLimit(np *apiv1.NodePool) int {
	q, ok := np.Spec.Limits[ResourceNodes]
	if !ok {
		return -1
	}
	return int(q.Value())
}
