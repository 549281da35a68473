package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

func expiringClaim(name, expireAfter string, created time.Time) *apiv1.NodeClaim {
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created),
		Labels:     map[string]string{apiv1.LabelNodePool: "general-purpose", apiv1.LabelCapacityType: "spot"},
		Finalizers: []string{apiv1.FinalizerTermination}}}
	nc.Spec.ExpireAfter = expireAfter
	nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Minute}
	nc.Status.NodeName = "ip-" + name
	return nc
}

// The reconciler deletes the NodeClaims older than their expireAfter (720h
// when unset), with an Event on the NodeClaim and the Node and the
// metric, and leaves the others; a young one is queued for its expiry.
func TestExpirationDeletesExpiredNodeClaimsOnly(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	claims := []*apiv1.NodeClaim{
		expiringClaim("expired", "2m", now.Add(-3*time.Minute)),
		expiringClaim("young", "2m", now.Add(-time.Minute)),
		expiringClaim("default-expired", "", now.Add(-721*time.Hour)),
		expiringClaim("default-young", "", now.Add(-719*time.Hour)),
		expiringClaim("never", "Never", now.Add(-10000*time.Hour)),
		expiringClaim("malformed", "2d", now.Add(-10000*time.Hour)),
	}
	cl := kubetest.New(t, kubetest.World{Claims: claims}).Cluster
	rec := record.NewFakeRecorder(20)
	cl.Recorder = rec
	m := metrics.New()
	r := newExpirationReconciler(cl, m, zap.NewNop())
	r.now = func() time.Time { return now }
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	for _, nc := range claims {
		if err := r.reconcile(context.Background(), q, nc.Name); err != nil {
			t.Fatalf("%s: %v", nc.Name, err)
		}
	}
	for _, nc := range claims {
		_, err := cl.NodeClaim(context.Background(), nc.Name)
		deleted := apierrors.IsNotFound(err)
		if want := nc.Name == "expired" || nc.Name == "default-expired"; deleted != want {
			t.Errorf("%s: deleted %v, want %v (%v)", nc.Name, deleted, want, err)
		}
	}
	if got := testutil.ToFloat64(m.NodeClaimsDisrupted.WithLabelValues("general-purpose", "expired", "spot")); got != 2 {
		t.Errorf("joinery_nodeclaims_disrupted_total{reason=expired} = %v, want 2", got)
	}
	var events []string
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	want := "Normal Expired NodeClaim expired: created 2026-11-29T11:57:00Z, expireAfter 2m0s; deleting it (1m0s past expiry); " +
		"pods still there after terminationGracePeriod 1m0s are deleted"
	if len(events) != 4 || events[0] != want || events[1] != want || !strings.Contains(events[2], "expireAfter 720h0m0s") {
		t.Errorf("events %q, want two on each expired NodeClaim and its Node, first %q", events, want)
	}
	if q.Len() != 0 {
		t.Errorf("%d queued at once; the young ones wait for their expiry", q.Len())
	}
}
