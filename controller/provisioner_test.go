package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewlyProvisionable(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	marked := pending.DeepCopy()
	marked.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}
	remarked := marked.DeepCopy()
	remarked.Status.Conditions[0].Message = "0/4 nodes are available"
	bound := marked.DeepCopy()
	bound.Spec.NodeName = "node-1"
	for _, c := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{"scheduler marks it", pending, marked, true},
		{"first seen marked", nil, marked, true},
		{"re-marked", marked, remarked, false},
		{"not marked yet", nil, pending, false},
		{"bound", marked, bound, false},
	} {
		if got := newlyProvisionable(c.old, c.new); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
