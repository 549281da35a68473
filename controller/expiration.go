package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// EventExpired is the Event reason on an expired NodeClaim and its Node;
// ReasonExpired the reason label of joinery_nodeclaims_disrupted_total.
const (
	EventExpired  = "Expired"
	ReasonExpired = "expired"
)

// expirationReconciler deletes NodeClaims once they are older than their
// expireAfter, as Karpenter v1's expiration controller does: forcefully,
// whatever the disruption budgets, do-not-disrupt annotations, pending
// pods or a pause say (disruption.ExpiryOf). The deletion is the usual
// finalizer-driven termination (deletionWatch, then the node's own
// workflow): the drain respects PodDisruptionBudgets and do-not-disrupt
// pods until the NodeClaim's terminationGracePeriod runs out, then deletes
// what is left. Each NodeClaim is queued for the moment it expires, so no
// polling; a claim changed since (expireAfter edited by hand) is judged
// again on the live object. Only the leader runs it; a new leader lists
// every NodeClaim again.
type expirationReconciler struct {
	cl      *kube.Cluster
	metrics *metrics.Metrics
	log     *zap.Logger
	now     func() time.Time

	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[string] // nil while not leading
}

func newExpirationReconciler(cl *kube.Cluster, m *metrics.Metrics, log *zap.Logger) *expirationReconciler {
	r := &expirationReconciler{cl: cl, metrics: m, log: log.Named("expiration"), now: time.Now}
	cl.OnNodeClaimEvent(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.observe,
		UpdateFunc: func(_, o interface{}) { r.observe(o) },
	})
	// NodeClaims without their own expireAfter follow their pool's.
	cl.OnNodePoolSpecChange(func() {
		for _, nc := range cl.NodeClaims() {
			if nc.Spec.ExpireAfter == "" {
				r.schedule(nc)
			}
		}
	})
	return r
}

// expiry is the claim's Expiry, its NodePool read only when the claim
// has no expireAfter of its own.
func (r *expirationReconciler) expiry(nc *apiv1.NodeClaim) (disruption.Expiry, error) {
	var pool *apiv1.NodePool
	if nc.Spec.ExpireAfter == "" {
		pools, _ := r.cl.NodePools()
		for _, p := range pools {
			if p.Name == nc.Labels[apiv1.LabelNodePool] {
				pool = p
			}
		}
	}
	return disruption.ExpiryOf(nc, pool)
}

func (r *expirationReconciler) observe(obj interface{}) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	nc := &apiv1.NodeClaim{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc) != nil {
		return
	}
	r.schedule(nc)
}

// schedule queues the claim for when it expires (at once if it has).
func (r *expirationReconciler) schedule(nc *apiv1.NodeClaim) {
	if nc.DeletionTimestamp != nil {
		return
	}
	e, err := r.expiry(nc)
	if err != nil || e.Never {
		return // a malformed expireAfter is reported by reconcile's caller, once per listing
	}
	r.mu.Lock()
	q := r.queue
	r.mu.Unlock()
	if q != nil {
		q.AddAfter(nc.Name, e.At.Sub(r.now()))
	}
}

// run reconciles until ctx ends (the leadership is lost).
func (r *expirationReconciler) run(ctx context.Context) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute))
	r.mu.Lock()
	r.queue = q
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.queue = nil
		r.mu.Unlock()
	}()
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for _, nc := range r.cl.NodeClaims() {
		if _, err := r.expiry(nc); err != nil {
			r.log.Warn("NodeClaim never expires: its expireAfter is not valid", zap.Error(err))
		}
		r.schedule(nc)
	}
	for {
		name, shutdown := q.Get()
		if shutdown {
			return
		}
		if err := r.reconcile(ctx, q, name); err != nil && ctx.Err() == nil {
			r.log.Warn("expire NodeClaim; retrying", zap.String("nodeclaim", name), zap.Error(err))
			q.AddRateLimited(name)
		} else {
			q.Forget(name)
		}
		q.Done(name)
	}
}

// reconcile judges the live NodeClaim: not yet expired, queue it again for
// its expiry; expired, delete it (finalizers kept, only this object: the
// UID precondition) and say so.
func (r *expirationReconciler) reconcile(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], name string) error {
	nc, err := r.cl.NodeClaim(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if nc.DeletionTimestamp != nil {
		return nil
	}
	e, err := r.expiry(nc)
	if err != nil {
		r.log.Warn("NodeClaim never expires: its expireAfter is not valid", zap.Error(err))
		return nil
	}
	now := r.now()
	if e.Never {
		return nil
	}
	if !e.Expired(now) {
		q.AddAfter(name, e.At.Sub(now))
		return nil
	}
	uid := nc.UID
	err = r.cl.Dynamic.Resource(apiv1.NodeClaimGVR).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another object of the same name now
	}
	if err != nil {
		return fmt.Errorf("delete expired NodeClaim: %w", err)
	}
	pool, capacity := nc.Labels[apiv1.LabelNodePool], nc.Labels[apiv1.LabelCapacityType]
	msg := expiredMessage(nc, e, now)
	r.cl.Recorder.Event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: nc.Name, UID: nc.UID},
		corev1.EventTypeNormal, EventExpired, msg)
	if nc.Status.NodeName != "" {
		r.cl.Recorder.Event(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: nc.Status.NodeName, UID: types.UID(nc.Status.NodeName)},
			corev1.EventTypeNormal, EventExpired, msg)
	}
	var grace *time.Duration
	if g := nc.Spec.TerminationGracePeriod; g != nil {
		grace = &g.Duration
	}
	r.metrics.NodeClaimDisruptedBy(pool, ReasonExpired, capacity, "", metrics.TerminationMode(grace))
	r.log.Info("deleting expired nodeclaim", zap.String("nodeclaim", nc.Name), zap.String("node", nc.Status.NodeName),
		zap.String("nodepool", pool), zap.Time("created", nc.CreationTimestamp.Time), zap.Duration("expireAfter", e.After),
		zap.Time("expiredAt", e.At))
	return nil
}

// expiredMessage is the Event's text: when the claim was created, its
// expireAfter, and how long its drain may take.
func expiredMessage(nc *apiv1.NodeClaim, e disruption.Expiry, now time.Time) string {
	msg := fmt.Sprintf("NodeClaim expired: created %s, expireAfter %s; deleting it (%s past expiry)",
		nc.CreationTimestamp.UTC().Format(time.RFC3339), e.After, now.Sub(e.At).Round(time.Second))
	if g := nc.Spec.TerminationGracePeriod; g != nil {
		return msg + fmt.Sprintf("; pods still there after terminationGracePeriod %s are deleted", g.Duration)
	}
	return msg + "; no terminationGracePeriod: the drain waits for PodDisruptionBudgets and do-not-disrupt pods"
}
