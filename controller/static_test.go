package controller

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
)

type staticFake struct {
	r        *staticReconciler
	dc       *dynfake.FakeDynamicClient
	launched []int
	started  []string
}

func newStaticFake(t *testing.T, pools []*apiv1.NodePool, claims []*apiv1.NodeClaim, objs ...runtime.Object) *staticFake {
	t.Helper()
	k := kubetest.Start(t, kubetest.World{Pools: pools, Claims: claims, Objects: objs})
	cl, dc := k.Cluster, k.Dynamic
	f := &staticFake{dc: dc}
	f.r = &staticReconciler{cl: cl, log: zap.NewNop(), pending: map[string]map[string]time.Time{},
		launch: func(_ context.Context, pool string, n int) (workflows.ProvisionResult, error) {
			f.launched = append(f.launched, n)
			var out workflows.ProvisionResult
			for i := 0; i < n; i++ {
				name := pool + "-new" + string(rune('a'+len(f.started)))
				f.started = append(f.started, name)
				out.NodeClaims = append(out.NodeClaims, name)
			}
			return out, nil
		}}
	return f
}

func (f *staticFake) deleted() []string {
	var out []string
	for _, a := range f.dc.Actions() {
		if d, ok := a.(interface{ GetName() string }); ok && a.GetVerb() == "delete" {
			out = append(out, d.GetName())
		}
	}
	sort.Strings(out)
	return out
}

func staticNodePool(name string, replicas int64) *apiv1.NodePool {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Replicas = &replicas
	return np
}

func staticClaim(pool, name string, ready bool, age time.Duration, now time.Time) *apiv1.NodeClaim {
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age)),
		Labels: map[string]string{apiv1.LabelNodePool: pool}, Finalizers: []string{apiv1.FinalizerTermination}}}
	nc.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if ready {
		nc.Status.NodeName = "ip-" + name
		nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(now.Add(-age))}}
	}
	return nc
}

// A static pool of 3 with one NodeClaim being deleted, one whose
// instance is terminating and one being disrupted (drift: its replacement
// comes first) gets two new NodeClaims and their sagas, once:
// the next pass, before the cache shows them, creates nothing more. A
// dynamic pool is left alone.
func TestStaticReconcilerReplacesLostNodeClaims(t *testing.T) {
	now := time.Now()
	gone := staticClaim("fixed", "fixed-gone", true, time.Hour, now)
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	term := staticClaim("fixed", "fixed-term", true, time.Hour, now)
	term.Status.Conditions = append(term.Status.Conditions, metav1.Condition{Type: "InstanceTerminating", Status: "True"})
	drifting := staticClaim("fixed", "fixed-drifting", true, time.Hour, now)
	// The activity writes this condition; staticpool.Terminating reads apiv1's name of it: the two must agree.
	drifting.Status.Conditions = append(drifting.Status.Conditions, metav1.Condition{Type: apiv1.ConditionDisruptionReason, Status: "True", Reason: "Drifted"})
	dynPool := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
	f := newStaticFake(t, []*apiv1.NodePool{staticNodePool("fixed", 3), dynPool},
		[]*apiv1.NodeClaim{staticClaim("fixed", "fixed-a", true, time.Hour, now), gone, term, drifting, staticClaim("gp", "gp-a", true, time.Hour, now)})
	f.r.pass(context.Background(), now)
	if !reflect.DeepEqual(f.launched, []int{2}) || len(f.started) != 2 {
		t.Fatalf("launched %v, started %v; want one launch of 2 and 2 sagas", f.launched, f.started)
	}
	f.r.pass(context.Background(), now.Add(time.Second))
	if len(f.launched) != 1 {
		t.Errorf("second pass launched again: %v", f.launched)
	}
	if d := f.deleted(); len(d) != 0 {
		t.Errorf("deleted %v", d)
	}
	// Past staticPendingTTL, NodeClaims the cache never showed are given up.
	f.r.pass(context.Background(), now.Add(staticPendingTTL+time.Second))
	if !reflect.DeepEqual(f.launched, []int{2, 2}) {
		t.Errorf("after the TTL: launched %v, want [2 2]", f.launched)
	}
}

// Surplus goes not-ready first, then the node with the fewest pods;
// limits.nodes caps the count.
func TestStaticReconcilerDeletesSurplus(t *testing.T) {
	now := time.Now()
	pool := staticNodePool("fixed", 3)
	pool.Spec.Limits = corev1.ResourceList{ResourceNodes: resource.MustParse("2")}
	busy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "busy"}, Spec: corev1.PodSpec{NodeName: "ip-fixed-b"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	f := newStaticFake(t, []*apiv1.NodePool{pool}, []*apiv1.NodeClaim{
		staticClaim("fixed", "fixed-a", true, time.Hour, now), staticClaim("fixed", "fixed-b", true, 2*time.Hour, now),
		staticClaim("fixed", "fixed-c", false, time.Minute, now), staticClaim("fixed", "fixed-d", true, 3*time.Hour, now),
	}, busy)
	f.r.pass(context.Background(), now)
	if got, want := f.deleted(), []string{"fixed-a", "fixed-c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deleted %v, want %v (not ready, then the newest empty one)", got, want)
	}
	if len(f.launched) != 0 {
		t.Errorf("launched %v", f.launched)
	}
}

// A launch that fails leaves nothing pending (the next pass asks again);
// one that got fewer NodeClaims than asked counts only those.
func TestStaticReconcilerLaunchErrors(t *testing.T) {
	now := time.Now()
	f := newStaticFake(t, []*apiv1.NodePool{staticNodePool("fixed", 2)}, nil)
	f.r.launch = func(_ context.Context, pool string, n int) (workflows.ProvisionResult, error) {
		f.launched = append(f.launched, n)
		return workflows.ProvisionResult{}, errors.New("temporal down")
	}
	f.r.pass(context.Background(), now)
	f.r.launch = func(_ context.Context, pool string, n int) (workflows.ProvisionResult, error) {
		f.launched = append(f.launched, n)
		return workflows.ProvisionResult{NodeClaims: []string{"fixed-x"}, Unschedulable: n - 1}, nil
	}
	f.r.pass(context.Background(), now.Add(time.Second))
	f.r.pass(context.Background(), now.Add(2*time.Second))
	if !reflect.DeepEqual(f.launched, []int{2, 2, 1}) {
		t.Errorf("launched %v, want [2 2 1] (nothing pending after the error, then fixed-x pending)", f.launched)
	}
}
