package activities

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// A pod the last plan placed on an existing node is left to the
// kube-scheduler for the nomination window: PendingToPlan skips it,
// UnnominatedPending (consolidation's check) still counts it.
func TestPendingToPlanSkipsExistingPlacements(t *testing.T) {
	now := time.Now()
	pending := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	}
	a, b, c := pending("a"), pending("b"), pending("c")
	acts := newFake(t, kubetest.World{Objects: []runtime.Object{a, b, c}})
	snap := &snapshot{podsByKey: map[string]*corev1.Pod{"default/a": a, "default/b": b, "default/c": c}}
	acts.Provisioning.rememberOutcome(context.Background(), solver.Plan{
		ExistingPlacements: []solver.Placement{{Pod: "default/a", Node: "ip-10-0-0-9.ec2.internal"}},
		Unschedulable:      []solver.Unschedulable{{Pod: "default/b", Reason: "too big"}},
	}, snap, now)
	if n := acts.Ledger().PendingToPlan(now.Add(time.Second)); n != 1 {
		t.Fatalf("PendingToPlan = %d, want 1 (c; a is left to the scheduler, b found no place)", n)
	}
	if n := acts.Ledger().UnnominatedPending(now.Add(time.Second)); n != 2 {
		t.Fatalf("UnnominatedPending = %d, want 2 (a and c)", n)
	}
	later := now.Add(capacity.DefaultNominationWindow + time.Second)
	if n := acts.Ledger().PendingToPlan(later); n != 2 {
		t.Fatalf("PendingToPlan after the window = %d, want 2 (a again, and c)", n)
	}
	// Expired entries are dropped when the next plan is remembered.
	acts.Provisioning.rememberOutcome(context.Background(), solver.Plan{}, snap, later)
	if _, ok := acts.Ledger().Remembered(sharedstate.KindOnExisting, "uid-a"); ok {
		t.Fatalf("memo after the window still holds a's placement")
	}
	if _, ok := acts.Ledger().Remembered(sharedstate.KindUnschedulable, "uid-b"); !ok {
		t.Fatalf("memo after the window lost b (unschedulable for %s)", capacity.UnschedulableRetry)
	}
}

// A plan's placements on existing capacity stick: a pod placed on a
// booting NodeClaim joins its nominees (after the pods it was launched
// for), and a pod placed on a Ready Node is pointed at it, after which the
// next plan leaves it to the scheduler (Held).
func TestPlacementsOnExistingCapacityStick(t *testing.T) {
	now := time.Now()
	pending := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	}
	a, b := pending("a"), pending("b")
	node, _ := testNode()
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	booting := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-booting",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-first"}}}
	acts := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{booting}, Objects: []runtime.Object{node, a, b}})
	snap := &snapshot{podsByKey: map[string]*corev1.Pod{"default/a": a, "default/b": b}}
	acts.Provisioning.followPlacements(context.Background(), zap.NewNop(), solver.Plan{ExistingPlacements: []solver.Placement{
		{Pod: "default/a", Node: node.Name}, {Pod: "default/b", Node: "nodeclaim/" + booting.Name}}}, snap)

	cl := acts.cluster()
	nc, err := cl.NodeClaim(context.Background(), booting.Name)
	if err != nil || nc.Annotations[capacity.AnnotationNominatedPods] != "uid-first,uid-b" {
		t.Fatalf("booting claim's nominees %q (%v), want uid-first,uid-b", nc.Annotations[capacity.AnnotationNominatedPods], err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := cl.Pods.Pods("default").Get("a")
		if err == nil && p.Status.NominatedNodeName == node.Name {
			if w := acts.Nominations().Waiting([]*corev1.Pod{p}, now); w["uid-a"] != node.Name {
				t.Fatalf("pointed pod a waits for %q, want the scheduler on %s", w["uid-a"], node.Name)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod a never pointed at %s (last seen %v)", node.Name, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
