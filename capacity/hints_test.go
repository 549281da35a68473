package capacity

import (
	"maps"
	"testing"
	"time"

	"errors"
	"fmt"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube/kubetest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A pending pod is pointed at its claim's node once that node is Ready
// and has no taint the pod does not tolerate (a pointer to a booting node
// would be cleared by the pod's next failed attempt); a pod pointed at
// another existing node with room for it is left alone (Held), one pointed
// at a node gone is pointed again. A Ready node still closed by the
// opening taint gets its pointers: they are what it waits for.
func TestSchedulerHintsOnlyToNodesThePodCanUseNow(t *testing.T) {
	now := time.Now()
	initialized := []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(now.Add(-time.Second))}}
	node := func(name string, taints ...corev1.Taint) *corev1.Node {
		n := twoCPUNode()
		n.Name, n.Spec.Taints = name, taints
		return n
	}
	claim := func(name, node, pods string, conds []metav1.Condition) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{AnnotationNominatedPods: pods}},
			Status: apiv1.NodeClaimStatus{NodeName: node, Conditions: conds}}
	}
	tainted := corev1.Taint{Key: "example.com/maintenance", Effect: corev1.TaintEffectNoSchedule}
	claims := []*apiv1.NodeClaim{
		claim("ready", "node-ready", "uid-a,uid-nominated,uid-stale", initialized),
		claim("booting", "node-booting", "uid-b", nil),
		claim("launched", "", "uid-d", nil),
		claim("tainted", "node-tainted", "uid-c,uid-tolerates", initialized),
		claim("opening", "node-opening", "uid-e", nil),
	}
	a, b, c := cpuPod("a", "", "500m"), cpuPod("b", "", "500m"), cpuPod("c", "", "500m")
	tolerates := cpuPod("tolerates", "", "500m")
	tolerates.Spec.Tolerations = []corev1.Toleration{{Key: tainted.Key, Operator: corev1.TolerationOpExists}}
	nominated := cpuPod("nominated", "", "500m")
	nominated.Status.NominatedNodeName = "node-elsewhere" // the scheduler's preemption
	stale, d, e := cpuPod("stale", "", "500m"), cpuPod("d", "", "500m"), cpuPod("e", "", "500m")
	stale.Status.NominatedNodeName = "node-gone"
	notReady := node("node-booting", corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute})
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	cl := kubetest.Start(t, kubetest.World{Claims: claims, Objects: []runtime.Object{
		node("node-ready"), notReady, node("node-tainted", tainted), node("node-elsewhere"), node("node-opening", lifecycle.OpeningTaint), a, b, c, d, e, tolerates, nominated, stale}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	got := map[string]string{}
	hints, blocked := noms.SchedulerHints([]*corev1.Pod{a, b, c, d, e, tolerates, nominated, stale}, now)
	for _, h := range hints {
		got[h.Pod.Name] = h.Node
	}
	if !maps.Equal(blocked, map[string]bool{"node-booting": true, "node-tainted": true}) {
		t.Errorf("blocked %v, want node-booting and node-tainted (a nominee that cannot be pointed there yet)", blocked)
	}
	want := map[string]string{"a": "node-ready", "tolerates": "node-tainted", "stale": "node-ready", "e": "node-opening"}
	if len(got) != len(want) {
		t.Fatalf("hints %v, want %v", got, want)
	}
	for pod, node := range want {
		if got[pod] != node {
			t.Fatalf("hints %v, want %v", got, want)
		}
	}
}

// Hints come by when their node turned Ready, earliest first; a booting
// node's nominees get none.
func TestSchedulerHintsInTheOrderNodesOpen(t *testing.T) {
	now := time.Now()
	node := func(name string, readyFor time.Duration, ready bool) *corev1.Node {
		n := twoCPUNode()
		n.Name = name
		n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-readyFor))
		if !ready {
			n.Status.Conditions[0].Status = corev1.ConditionFalse
		}
		return n
	}
	claim := func(name, node, pods string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{AnnotationNominatedPods: pods}},
			Status: apiv1.NodeClaimStatus{NodeName: node}}
	}
	a, b, c := cpuPod("a", "", "500m"), cpuPod("b", "", "500m"), cpuPod("c", "", "500m")
	cl := kubetest.Start(t, kubetest.World{
		Claims: []*apiv1.NodeClaim{claim("x", "booting-early", "uid-a"), claim("y", "ready-late", "uid-b"), claim("z", "ready-early", "uid-c")},
		Objects: []runtime.Object{node("booting-early", time.Minute, false), node("ready-late", 10*time.Second, true),
			node("ready-early", 30*time.Second, true), a, b, c}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	var got []string
	hints, _ := noms.SchedulerHints([]*corev1.Pod{a, b, c}, now)
	for _, h := range hints {
		got = append(got, h.Node)
	}
	want := []string{"ready-early", "ready-late"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("hints to %v, want %v", got, want)
	}
}

// The API server refuses a pointer on a pod the scheduler bound after the
// cache saw it: that race is no failure; other refusals are.
func TestBoundMeanwhile(t *testing.T) {
	pod := schema.GroupKind{Kind: "Pod"}
	bound := apierrors.NewInvalid(pod, "web-1", field.ErrorList{field.Forbidden(field.NewPath("status", "nominatedNodeName"),
		"may not be set on pods that are already bound to a node")})
	other := apierrors.NewInvalid(pod, "web-1", field.ErrorList{field.Invalid(field.NewPath("status", "nominatedNodeName"), "-", "not a DNS-1123 subdomain")})
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"bound meanwhile", bound, true},
		{"wrapped", fmt.Errorf("patch: %w", bound), true},
		{"another invalid value", other, false},
		{"forbidden by RBAC", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-1", errors.New("no")), false},
	} {
		if got := boundMeanwhile(c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
