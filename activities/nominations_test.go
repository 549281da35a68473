package activities

import (
	"context"
	"testing"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
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
