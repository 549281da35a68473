package pending

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func unschedulable(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}
	return p
}

func TestProvisionable(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	marked := unschedulable(pending)
	bound := marked.DeepCopy()
	bound.Spec.NodeName = "node-1"
	deleting := marked.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	failed := marked.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	succeeded := marked.DeepCopy()
	succeeded.Status.Phase = corev1.PodSucceeded
	daemon := marked.DeepCopy()
	daemon.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "node-agent"}}
	mirror := marked.DeepCopy()
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1"}}
	replica := marked.DeepCopy()
	replica.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1"}}
	gated := pending.DeepCopy()
	gated.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"marked unschedulable", marked, true},
		{"not marked yet", pending, false},
		{"bound", bound, false},
		{"terminating", deleting, false},
		{"failed", failed, false},
		{"succeeded", succeeded, false},
		{"scheduling gated", gated, false},
		{"a DaemonSet's", daemon, false},
		{"a mirror pod", mirror, false},
		{"a ReplicaSet's", replica, true},
	} {
		if got := Provisionable(c.pod); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNewlyProvisionable(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	marked := unschedulable(pending)
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
		{"unbound again", bound, marked, true},
		{"deleted", marked, nil, false},
	} {
		if got := NewlyProvisionable(c.old, c.new); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
