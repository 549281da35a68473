package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetCondition sets any status with its reason, keeps the transition time
// while the status stays, moves it when the status changes, and leaves
// the other conditions and the input alone.
func TestSetCondition(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC))
	t1, t2 := metav1.NewTime(t0.Add(time.Minute)), metav1.NewTime(t0.Add(2*time.Minute))
	in := []metav1.Condition{{Type: ConditionLaunched, Status: metav1.ConditionTrue, Reason: ReasonLaunched, LastTransitionTime: t0}}
	c := SetCondition(in, metav1.Condition{Type: ConditionRegistered, Status: metav1.ConditionUnknown, Reason: ReasonNodeNotFound}, t0)
	c = SetCondition(c, metav1.Condition{Type: ConditionRegistered, Status: metav1.ConditionUnknown, Reason: ReasonNodeNotFound, Message: "still"}, t1)
	if r := FindCondition(c, ConditionRegistered); r == nil || r.LastTransitionTime != t0 || r.Message != "still" {
		t.Fatalf("same status: %+v", r)
	}
	c = SetCondition(c, metav1.Condition{Type: ConditionRegistered, Status: metav1.ConditionFalse, Reason: "RegistrationTimeout"}, t2)
	if r := FindCondition(c, ConditionRegistered); r.Status != metav1.ConditionFalse || r.Reason != "RegistrationTimeout" || r.LastTransitionTime != t2 {
		t.Fatalf("status change: %+v", r)
	}
	if len(c) != 2 || c[0].Type != ConditionLaunched || !IsConditionTrue(c, ConditionLaunched) || IsConditionTrue(c, ConditionRegistered) {
		t.Fatalf("conditions = %+v", c)
	}
	if len(in) != 1 {
		t.Fatalf("input modified: %+v", in)
	}
	if r := SetCondition(nil, metav1.Condition{Type: ConditionLaunched, Status: metav1.ConditionFalse}, t0); r[0].Reason != "False" {
		t.Fatalf("empty reason: %+v", r)
	}
}
