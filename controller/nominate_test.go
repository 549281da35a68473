package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// A pass points each pending pod at the Ready node launched for it,
// once: when the scheduler clears the hint (the pod no longer fits there),
// the next pass leaves it cleared.
func TestSchedulerHintsPointPodsAtTheirNodeOnce(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-7.ec2.internal"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x1",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: types.UID("uid-web-1")},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable}}}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{node, pod}})
	noms := capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })
	h := newSchedulerHints(f.Cluster, noms, zap.NewNop())
	nominated := func() string {
		p, err := f.Kube.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Status.NominatedNodeName
	}

	h.pass(ctx, time.Now())
	if got := nominated(); got != node.Name {
		t.Fatalf("nominatedNodeName %q, want %q", got, node.Name)
	}
	// The scheduler found it does not fit there after all and cleared it.
	p, _ := f.Kube.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
	p.Status.NominatedNodeName = ""
	if _, err := f.Kube.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "cleared hint cached", 0, func() bool {
		c, err := f.Cluster.Pods.Pods("default").Get("web-1")
		return err == nil && c.Status.NominatedNodeName == ""
	})
	h.pass(ctx, time.Now())
	if got := nominated(); got != "" {
		t.Fatalf("hint written again after the scheduler cleared it: %q", got)
	}
}

// Only a Node turning Ready, or losing a taint while Ready, wakes the
// hints (not every Node update of a wave: heartbeats, labels).
func TestNodeOpened(t *testing.T) {
	node := func(ready bool, taints int) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}
		if ready {
			n.Status.Conditions[0].Status = corev1.ConditionTrue
		}
		for i := 0; i < taints; i++ {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: fmt.Sprintf("t%d", i), Effect: corev1.TaintEffectNoSchedule})
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		old, new interface{}
		want     bool
	}{
		{"turned Ready", node(false, 1), node(true, 1), true},
		{"lost a startup taint", node(true, 1), node(true, 0), true},
		{"heartbeat", node(true, 0), node(true, 0), false},
		{"tainted", node(true, 0), node(true, 1), false},
		{"went NotReady", node(true, 0), node(false, 0), false},
		{"not a Node", "x", node(true, 0), false},
	} {
		if got := nodeOpened(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A pass writes at most its bound of pointers (hintsPerPass; a smaller
// one here, as the fake clientset's watch buffers only 100 events) and
// asks for another pass.
func TestSchedulerHintsPassIsBounded(t *testing.T) {
	ctx := context.Background()
	const perPass = 24
	const pods = perPass + 14
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400"), corev1.ResourcePods: resource.MustParse("400")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	objs := []runtime.Object{node}
	var uids []string
	for i := range pods {
		name := fmt.Sprintf("web-%d", i)
		uids = append(uids, "uid-"+name)
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable}}}})
	}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x2",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: strings.Join(uids, ",")}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: objs})
	noms := capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })
	h := newSchedulerHints(f.Cluster, noms, zap.NewNop())
	h.perPass = perPass
	pointed := func() int {
		list, err := f.Kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range list.Items {
			if p.Status.NominatedNodeName == node.Name {
				n++
			}
		}
		return n
	}

	h.pass(ctx, time.Now())
	if got := pointed(); got != perPass {
		t.Fatalf("%d pods pointed after one pass, want %d", got, perPass)
	}
	select {
	case <-h.trigger:
	default:
		t.Fatal("a pass that left hints did not ask for another")
	}
	h.pass(ctx, time.Now())
	if got := pointed(); got != pods {
		t.Fatalf("%d pods pointed after two passes, want %d", got, pods)
	}
}
