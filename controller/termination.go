package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// deletionWatch turns the deletion of a NodeClaim, or of a Node Joinery
// registered, into the node's termination: both carry the
// karpenter.sh/termination finalizer, and the informers see their
// deletionTimestamp. It signals `deleted` to the node's nodeclaim/<name>
// workflow; when no run of it is open (it ended, was terminated, or never
// ran), it starts NodeClaimTermination as a new run of the same id, so the
// ending is still in that id's history. A deleted Node's NodeClaim is
// deleted first (its finalizer keeps it until the saga ends). A NodeClaim
// is signalled once per process (the Node's and the NodeClaim's deletions
// are one ending); a failed signal is retried with backoff. Every replica runs it: a second
// signal is ignored by a workflow already terminating.
type deletionWatch struct {
	cluster *kube.Cluster
	tc      client.Client
	log     *zap.Logger
	private bool
	queue   workqueue.TypedRateLimitingInterface[workflows.DeletionNotice]

	mu   sync.Mutex
	sent map[string]bool // NodeClaim names signalled
}

func newDeletionWatch(cl *kube.Cluster, tc client.Client, private bool, log *zap.Logger) *deletionWatch {
	d := &deletionWatch{cluster: cl, tc: tc, log: log.Named("termination"), private: private, sent: map[string]bool{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[workflows.DeletionNotice](time.Second, time.Minute))}
	cl.OnNodeClaimEvent(cache.ResourceEventHandlerFuncs{
		AddFunc:    d.nodeClaim,
		UpdateFunc: func(_, o interface{}) { d.nodeClaim(o) },
		DeleteFunc: func(o interface{}) {
			if u, ok := o.(*unstructured.Unstructured); ok {
				d.mu.Lock()
				delete(d.sent, u.GetName())
				d.mu.Unlock()
			}
		},
	})
	cl.OnNodeEvent(cache.ResourceEventHandlerFuncs{
		AddFunc:    d.node,
		UpdateFunc: func(_, o interface{}) { d.node(o) },
	})
	return d
}

func (d *deletionWatch) nodeClaim(obj interface{}) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetDeletionTimestamp() == nil || !hasTerminationFinalizer(u.GetFinalizers()) {
		return
	}
	d.enqueue(workflows.DeletionNotice{Object: workflows.ObjectNodeClaim, Name: u.GetName(), NodeClaim: u.GetName(), At: u.GetDeletionTimestamp().Time})
}

func (d *deletionWatch) node(obj interface{}) {
	n, ok := obj.(*corev1.Node)
	if !ok || n.DeletionTimestamp == nil || !hasTerminationFinalizer(n.Finalizers) {
		return
	}
	claim := ""
	for _, o := range n.OwnerReferences {
		if o.Kind == "NodeClaim" && o.APIVersion == "karpenter.sh/v1" {
			claim = o.Name
		}
	}
	if claim == "" {
		for _, nc := range d.cluster.NodeClaims() {
			if nc.Status.NodeName == n.Name || (n.Spec.ProviderID != "" && nc.Status.ProviderID == n.Spec.ProviderID) {
				claim = nc.Name
			}
		}
	}
	if claim == "" {
		d.log.Warn("deleted node with the termination finalizer names no NodeClaim; left alone", zap.String("node", n.Name))
		return
	}
	d.enqueue(workflows.DeletionNotice{Object: workflows.ObjectNode, Name: n.Name, NodeClaim: claim, At: n.DeletionTimestamp.Time})
}

// enqueue queues the notice for its NodeClaim, once per NodeClaim.
func (d *deletionWatch) enqueue(n workflows.DeletionNotice) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sent[n.NodeClaim] {
		return
	}
	d.sent[n.NodeClaim] = true
	d.queue.Add(n)
}

func (d *deletionWatch) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		d.queue.ShutDown()
	}()
	for {
		item, shutdown := d.queue.Get()
		if shutdown {
			return
		}
		err := d.handle(ctx, item)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("signal termination; retrying", zap.String("nodeclaim", item.NodeClaim), zap.Error(err))
			d.queue.AddRateLimited(item)
		} else {
			d.queue.Forget(item)
		}
		d.queue.Done(item)
	}
}

func (d *deletionWatch) handle(ctx context.Context, item workflows.DeletionNotice) error {
	if item.Object == workflows.ObjectNode {
		// As Karpenter's node termination does first: the NodeClaim of a
		// deleted Node is deleting at once, so what counts live NodeClaims
		// (a static pool, kubectl) never counts it while the saga drains.
		if err := d.cluster.DeleteNodeClaimKeepFinalizers(ctx, item.NodeClaim); err != nil {
			return err
		}
	}
	id := workflows.NodeClaimWorkflowID(item.NodeClaim)
	err := d.tc.SignalWorkflow(ctx, id, "", workflows.SignalDeleted, item)
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		if err == nil {
			d.log.Info("termination signalled", zap.String("nodeclaim", item.NodeClaim), zap.String("deleted", item.Object+" "+item.Name))
		}
		return err
	}
	// No open run: start the ending alone under the same id.
	_, err = d.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SANodeClaim.ValueSet(item.NodeClaim),
			workflows.SAPhase.ValueSet(workflows.PhaseTerminating)),
	}, workflows.NodeClaimTerminationWorkflow, workflows.TerminationRequest{NodeClaim: item.NodeClaim, Reason: "deleted", Private: d.private})
	if err == nil {
		d.log.Info("termination started (no running NodeClaim workflow)", zap.String("nodeclaim", item.NodeClaim), zap.String("deleted", item.Object+" "+item.Name))
	}
	return err
}

func hasTerminationFinalizer(fins []string) bool {
	for _, f := range fins {
		if f == apiv1.FinalizerTermination {
			return true
		}
	}
	return false
}
