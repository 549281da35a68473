package capacity

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Hint is a pending pod and the node its NodeClaim was launched for it on.
type Hint struct {
	Pod  *corev1.Pod
	Node string
}

// SchedulerHints are the pending pods to point at their nominated node
// (status.nominatedNodeName): each pod Of still nominates to a NodeClaim
// whose Node has registered and whose lasting taints the pod tolerates
// (Of holds a nomination to a Ready node only while the pod fits its free
// allocatable). The kube-scheduler tries a nominated node first and keeps
// the room of nominated pods from pods of equal or lower priority, so the
// pods of a wave land where the plan put them, rather than the first
// nodes to come Ready taking whichever pods the scheduler picks, leaving
// the rest to a new plan. A pod pointed at a Node where it has room
// (the scheduler's preemption, or an earlier hint) is Held there, not in
// Of, and keeps its pointer; a pointer that no longer holds is replaced.
// Blocked are the nodes with a nominee that cannot be pointed yet (a
// startup taint it does not tolerate is still there): a node still
// opening waits for it.
func (n *Nominations) SchedulerHints(pending []*corev1.Pod, now time.Time) (hints []Hint, blocked map[string]bool) {
	to := n.Of(pending, now)
	claims := map[string]*apiv1.NodeClaim{}
	for _, nc := range n.cluster.NodeClaims() {
		claims[nc.Name] = nc
	}
	blocked = map[string]bool{}
	for _, p := range pending {
		nc := claims[to[string(p.UID)]]
		if nc == nil || nc.Status.NodeName == "" || p.Status.NominatedNodeName == nc.Status.NodeName {
			continue
		}
		if !n.pointable(nc, p) {
			blocked[nc.Status.NodeName] = true
			continue
		}
		hints = append(hints, Hint{Pod: p, Node: nc.Status.NodeName})
	}
	n.byOpening(hints)
	return hints, blocked
}

// byOpening orders hints by when their node turned Ready, earliest
// first, each node's together: in a burst the pointers are written over
// tens of seconds, and a node opens to the scheduler once its own are.
func (n *Nominations) byOpening(hints []Hint) {
	readyAt := map[string]time.Time{}
	for _, h := range hints {
		if _, ok := readyAt[h.Node]; !ok {
			if node, err := n.cluster.Nodes.Get(h.Node); err == nil {
				readyAt[h.Node] = lifecycle.ReadySince(node)
			}
		}
	}
	sort.SliceStable(hints, func(i, j int) bool {
		a, b := readyAt[hints[i].Node], readyAt[hints[j].Node]
		return a.Before(b) || a.Equal(b) && hints[i].Node < hints[j].Node
	})
}

// nodeExists says whether the Node is in the cache: a pointer to a node
// gone (its claim failed, or was disrupted) is replaced, as the scheduler
// no longer clears pointers (KEP-5278, Kubernetes 1.34).
func (n *Nominations) nodeExists(name string) bool {
	_, err := n.cluster.Nodes.Get(name)
	return err == nil
}

// hintWriters bounds the concurrent pod status patches of one batch of
// pointers (a wave's node, or a plan, brings tens of pods at once).
const hintWriters = 16

// WriteHints points each hint's pod at its node (kube.Cluster.NominatePod),
// hintWriters at a time, and reports each outcome to done, one call at a
// time: err nil when written.
func WriteHints(ctx context.Context, cl *kube.Cluster, hints []Hint, done func(Hint, error)) {
	var g errgroup.Group
	g.SetLimit(hintWriters)
	var mu sync.Mutex
	for _, h := range hints {
		g.Go(func() error {
			err := cl.NominatePod(ctx, h.Pod, h.Node)
			mu.Lock()
			defer mu.Unlock()
			done(h, err)
			return nil
		})
	}
	_ = g.Wait()
}

// PointerMoot says whether a refused pointer needs nothing more: the pod
// is gone or changed, or the scheduler bound it meanwhile.
func PointerMoot(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsConflict(err) || boundMeanwhile(err)
}

// boundMeanwhile says whether the API server refused a pointer because the
// scheduler bound the pod after the cache saw it pending (a pointer may not
// be set on a bound pod).
func boundMeanwhile(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "status.nominatedNodeName" && c.Type == metav1.CauseType(field.ErrorTypeForbidden) {
			return true
		}
	}
	return false
}
