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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// A Ready node's nominations hold only as far as its free allocatable
// goes; an in-flight claim keeps all of its own.
func TestLiveNominations(t *testing.T) {
	now := time.Now()
	cpuPod := func(name, node, cpu string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		if node == "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		} else {
			p.Status.Phase = corev1.PodRunning
		}
		return p
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	ready := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-a,uid-b,uid-c"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name, Conditions: []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Second))}}}}
	inflight := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-inflight",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-d,uid-e"}}}
	a, b, c := cpuPod("a", "", "800m"), cpuPod("b", "", "500m"), cpuPod("c", "", "200m")
	d, e := cpuPod("d", "", "4"), cpuPod("e", "", "4")
	// The scheduler bound another pod there first: 1 CPU left of 2.
	other := cpuPod("other", node.Name, "1")
	acts := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{ready, inflight}, Objects: []runtime.Object{node, a, b, c, d, e, other}})

	got := acts.liveNominations([]*corev1.Pod{a, b, c, d, e}, now)
	want := map[string]string{"uid-a": ready.Name, "uid-c": ready.Name, "uid-d": inflight.Name, "uid-e": inflight.Name}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v (b, 500m, no longer fits the 200m left)", got, want)
		}
	}
	// The provisioner sees b as work to do now, not after the window.
	if n := acts.Ledger().UnnominatedPending(now); n != 1 {
		t.Fatalf("UnnominatedPending = %d, want 1 (pod b)", n)
	}
}

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
	later := now.Add(DefaultNominationWindow + time.Second)
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
