package controller

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const (
	peNode  = "ip-10-0-0-4.ec2.internal"
	peClaim = "general-purpose-abcde"
	pePool  = "general-purpose"
)

var peT = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// podEventsWorld is a started Cluster over client-go fakes (kubetest): one
// initialized NodeClaim (an hour ago) with its Node, in a NodePool whose
// consolidateAfter is 5m.
func podEventsWorld(t *testing.T) *kubetest.Fake {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: peNode, Labels: map[string]string{apiv1.LabelNodePool: pePool},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: peClaim}}}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: peClaim, Labels: map[string]string{apiv1.LabelNodePool: pePool}},
		Status: apiv1.NodeClaimStatus{NodeName: peNode, Conditions: []metav1.Condition{
			{Type: apiv1.ConditionInitialized, Status: metav1.ConditionTrue, Reason: "Initialized", LastTransitionTime: metav1.NewTime(peT.Add(-time.Hour))},
			{Type: conditionEmpty, Status: metav1.ConditionTrue, Reason: "Empty", LastTransitionTime: metav1.NewTime(peT.Add(-time.Hour))},
		}}}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pePool}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Disruption.ConsolidateAfter = "5m"
	f := kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{np}, Claims: []*apiv1.NodeClaim{nc}, Objects: []runtime.Object{node}})
	if pools, bad := f.NodePools(); len(pools) != 1 || len(bad) != 0 {
		t.Fatalf("pools %v, invalid %v", pools, bad)
	}
	return f
}

func cachedLastPodEvent(cl *kube.Cluster) time.Time {
	return disruption.LastPodEvent(cl.CachedNodeClaim(peClaim))
}

func consolidatableCond(cl *kube.Cluster) *metav1.Condition {
	return apiv1.FindCondition(cl.CachedNodeClaim(peClaim).Status.Conditions, apiv1.ConditionConsolidatable)
}

func boundPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// A pod bound to the node writes lastPodEventTime (rounded up to the
// second); a second event within 10 s is held back and written when the
// window ends, with its own time; the Consolidatable condition follows
// the clock, and goes with consolidateAfter Never.
func TestPodEventsWriteTheClockAndTheCondition(t *testing.T) {
	f := podEventsWorld(t)
	cl, dc := f.Cluster, f.Dynamic
	m := metrics.New()
	p := newPodEvents(cl, m, zap.NewNop())
	now := peT
	p.now = func() time.Time { return now }
	term := p.lead()
	if len(term.pending) != 0 {
		t.Fatalf("catch-up without pods: %v", term.pending)
	}

	// Initialized an hour ago, no pod event: consolidatable; the old
	// Empty condition goes.
	if requeue := p.reconcile(term, peClaim); requeue != 0 {
		t.Errorf("requeue %v", requeue)
	}
	testwait.Eventually(t, "Consolidatable True", 0, func() bool { c := consolidatableCond(cl); return c != nil && c.Status == metav1.ConditionTrue })
	if c := apiv1.FindCondition(cl.CachedNodeClaim(peClaim).Status.Conditions, conditionEmpty); c != nil {
		t.Errorf("Empty condition kept: %+v", c)
	}

	// A pod is bound at 12:00:00.3.
	now = peT.Add(300 * time.Millisecond)
	p.podChanged(boundPod("web-1", ""), boundPod("web-1", peNode))
	if after := p.write(term, peClaim); after != 0 {
		t.Errorf("first write held back %v", after)
	}
	testwait.Eventually(t, "lastPodEventTime written", 0, func() bool { return cachedLastPodEvent(cl).Equal(peT.Add(time.Second)) })
	if got := testutil.ToFloat64(m.PodEventWrites); got != 1 {
		t.Errorf("writes %v, want 1", got)
	}
	// The window restarts from 12:00:01: consolidatable at 12:05:01.
	if requeue := p.reconcile(term, peClaim); requeue != 5*time.Minute+700*time.Millisecond {
		t.Errorf("requeue %v, want 5m0.7s", requeue)
	}
	testwait.Eventually(t, "Consolidatable removed", 0, func() bool { return consolidatableCond(cl) == nil })

	// A second pod at 12:00:04 is held back until 12:00:11.
	now = peT.Add(4 * time.Second)
	p.podChanged(boundPod("web-2", ""), boundPod("web-2", peNode))
	if after := p.write(term, peClaim); after != 7*time.Second {
		t.Errorf("second write held back %v, want 7s", after)
	}
	if got := testutil.ToFloat64(m.PodEventWrites); got != 1 || !cachedLastPodEvent(cl).Equal(peT.Add(time.Second)) {
		t.Errorf("written inside the window: %v writes, clock %v", got, cachedLastPodEvent(cl))
	}
	now = peT.Add(11 * time.Second)
	if after := p.write(term, peClaim); after != 0 {
		t.Errorf("write after the window held back %v", after)
	}
	testwait.Eventually(t, "the held-back event written", 0, func() bool { return cachedLastPodEvent(cl).Equal(peT.Add(4 * time.Second)) })

	// Not before 12:05:04; then True.
	now = peT.Add(5*time.Minute + 3*time.Second)
	if requeue := p.reconcile(term, peClaim); requeue != time.Second || consolidatableCond(cl) != nil {
		t.Errorf("at 12:05:03: requeue %v, condition %+v", requeue, consolidatableCond(cl))
	}
	now = peT.Add(5*time.Minute + 4*time.Second)
	p.reconcile(term, peClaim)
	testwait.Eventually(t, "Consolidatable True at 12:05:04", 0, func() bool { c := consolidatableCond(cl); return c != nil && c.Status == metav1.ConditionTrue })

	// The pod terminating is an event too; a DaemonSet pod's is not.
	now = peT.Add(6 * time.Minute)
	ds := boundPod("agent", peNode)
	ds.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}}
	dsGone := ds.DeepCopy()
	dsGone.DeletionTimestamp = &metav1.Time{Time: now}
	p.podChanged(ds, dsGone)
	if len(term.pending) != 0 {
		t.Errorf("a DaemonSet pod made an event: %v", term.pending)
	}
	gone := boundPod("web-1", peNode)
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	p.podChanged(boundPod("web-1", peNode), gone)
	p.write(term, peClaim)
	testwait.Eventually(t, "terminating pod written", 0, func() bool { return cachedLastPodEvent(cl).Equal(now) })
	p.reconcile(term, peClaim)
	testwait.Eventually(t, "Consolidatable removed again", 0, func() bool { return consolidatableCond(cl) == nil })

	// consolidateAfter Never: no condition, nothing to wait for.
	patch := []byte(`{"spec":{"disruption":{"consolidateAfter":"Never"}}}`)
	if _, err := dc.Resource(apiv1.NodePoolGVR).Patch(context.Background(), pePool, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the pool's Never cached", 0, func() bool {
		pools, _ := cl.NodePools()
		return len(pools) == 1 && pools[0].Spec.Disruption.ConsolidateAfter == "Never"
	})
	now = now.Add(time.Hour)
	if requeue := p.reconcile(term, peClaim); requeue != 0 || consolidatableCond(cl) != nil {
		t.Errorf("Never: requeue %v, condition %+v", requeue, consolidatableCond(cl))
	}

	// Not leading: events are left to the next leader's catch-up.
	p.term.Store(nil)
	p.podChanged(boundPod("web-3", ""), boundPod("web-3", peNode))
	if len(term.pending) != 0 {
		t.Errorf("recorded while not leading: %v", term.pending)
	}
}

// A new leader takes the events no controller saw from the pods' own
// record (a pod scheduled after the stored clock), not from its own
// start: the other nodes' windows do not restart.
func TestPodEventsCatchUpOnLeading(t *testing.T) {
	f := podEventsWorld(t)
	cl, kc := f.Cluster, f.Kube
	scheduled := peT.Add(20 * time.Minute)
	pod := boundPod("web-1", peNode)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled)}}
	old := boundPod("web-0", peNode) // scheduled before initialization: no event
	old.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(peT.Add(-2 * time.Hour))}}
	elsewhere := boundPod("db-0", "ip-10-0-0-99.ec2.internal") // not a Joinery node
	elsewhere.Status.Conditions = pod.Status.Conditions
	for _, po := range []*corev1.Pod{pod, old, elsewhere} {
		if _, err := kc.CoreV1().Pods("default").Create(context.Background(), po, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Eventually(t, "pods cached", 0, func() bool { return len(cl.PodInformer.GetStore().List()) == 3 })
	// The controller starts after them (a restart): their Adds are the
	// initial list, not events.
	p := newPodEvents(cl, nil, zap.NewNop())
	now := peT.Add(time.Hour)
	p.now = func() time.Time { return now }
	term := p.lead()
	if got := term.pending[peClaim]; !got.Equal(scheduled) || len(term.pending) != 1 {
		t.Fatalf("catch-up pending %v, want %s at %v", term.pending, peClaim, scheduled)
	}
	p.write(term, peClaim)
	testwait.Eventually(t, "caught-up clock written", 0, func() bool { return cachedLastPodEvent(cl).Equal(scheduled) })
	// The pods record nothing newer than the stored clock now: the next
	// leader has nothing to catch up.
	if term := p.lead(); len(term.pending) != 0 {
		t.Errorf("second leader pending %v", term.pending)
	}
}
