package controller

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/policy/overlay"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOverlayConditions(t *testing.T) {
	set := &overlay.Set{Rejected: map[string]overlay.Verdict{"b": {Reason: v1alpha1.ReasonConflict, Message: "conflict with another overlay: c"}}}
	a := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2}}
	got := overlayConditions(a, set)
	if len(got) != 2 || got[0].Type != v1alpha1.ConditionValidationSucceeded || got[0].Status != metav1.ConditionTrue ||
		got[1].Type != v1alpha1.ConditionReady || got[1].Status != metav1.ConditionTrue || got[1].Reason != "Ready" || got[0].ObservedGeneration != 2 {
		t.Fatalf("valid overlay: %+v", got)
	}
	b := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	got = overlayConditions(b, set)
	if got[0].Status != metav1.ConditionFalse || got[0].Reason != v1alpha1.ReasonConflict || got[1].Status != metav1.ConditionFalse ||
		got[1].Message != "conflict with another overlay: c" {
		t.Fatalf("conflicting overlay: %+v", got)
	}
	// Written once: the same verdict again is no change, and keeps its
	// transition time.
	old := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b.Status.Conditions = overlayConditions(b, set)
	b.Status.Conditions[0].LastTransitionTime = old
	again := overlayConditions(b, set)
	if !apiv1.SameConditions(b.Status.Conditions, again) || !again[0].LastTransitionTime.Equal(&old) {
		t.Fatalf("unchanged verdict rewritten: %+v", again)
	}
	delete(set.Rejected, "b")
	if apiv1.SameConditions(b.Status.Conditions, overlayConditions(b, set)) {
		t.Fatal("a resolved conflict is not written")
	}
}
