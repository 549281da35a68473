package capacity

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
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
	node := twoCPUNode()
	ready := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-a,uid-b,uid-c"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name, Conditions: []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Second))}}}}
	inflight := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-inflight",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-d,uid-e"}}}
	// Its Node initialized longer ago than the window: f is planned again.
	expired := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-expired",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-f,uid-gone"}},
		Status: apiv1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True",
			LastTransitionTime: metav1.NewTime(now.Add(-DefaultNominationWindow - time.Second))}}}}
	// Past the window too, but g is pointed at its node (the scheduler has
	// not got to it yet): g stays nominated, h does not.
	pointedNode := twoCPUNode()
	pointedNode.Name = "ip-10-0-0-10.ec2.internal"
	pointed := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-pointed",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-g,uid-h"}},
		Status: apiv1.NodeClaimStatus{NodeName: pointedNode.Name, Conditions: expired.Status.Conditions}}
	a, b, c := cpuPod("a", "", "800m"), cpuPod("b", "", "500m"), cpuPod("c", "", "200m")
	d, e, f := cpuPod("d", "", "4"), cpuPod("e", "", "4"), cpuPod("f", "", "1")
	g, h := cpuPod("g", "", "1"), cpuPod("h", "", "1")
	g.Status.NominatedNodeName = pointedNode.Name
	// The scheduler bound another pod there first: 1 CPU left of 2.
	other := cpuPod("other", node.Name, "1")
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{ready, inflight, expired, pointed},
		Objects: []runtime.Object{node, pointedNode, a, b, c, d, e, f, g, h, other}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	got, lapsed := noms.Explain([]*corev1.Pod{a, b, c, d, e, f, g, h}, now)
	want := map[string]string{"uid-a": ready.Name, "uid-c": ready.Name, "uid-d": inflight.Name, "uid-e": inflight.Name, "uid-g": pointed.Name}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if lapsed != (Lapsed{Window: 2, Displaced: 1}) {
		t.Fatalf("lapsed %+v, want f and h by the window and b displaced", lapsed)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v (b, 500m, no longer fits the 200m left)", got, want)
		}
	}
	// The provisioner sees b as work to do now, not after the window.
	ledger := NewLedger(nil, zap.NewNop(), cl.ProvisionablePods, noms.Of, noms.Window)
	if n := ledger.UnnominatedPending(now); n != 3 {
		t.Fatalf("UnnominatedPending = %d, want 3 (pods b, f and h)", n)
	}
}

// The nodes of one wave come Ready one by one, and the scheduler binds
// to the first whichever pending pods it picks: a pod whose place on its
// Ready node was taken by a pod of the same owner nominated to a claim
// still booting keeps a nomination, to that claim; a pod of another
// owner has no such place and is planned again.
func TestDisplacedNomineeTakesThePlaceOnTheBootingClaim(t *testing.T) {
	now := time.Now()
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-web", Controller: ptrTo(true)}
	pod := func(name, node string, owned bool) *corev1.Pod {
		p := cpuPod(name, node, "1")
		if owned {
			p.OwnerReferences = []metav1.OwnerReference{owner}
		}
		return p
	}
	node := twoCPUNode()
	first := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "wave-a-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-q1,uid-q2,uid-stranger"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	booting := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "wave-b-booting",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-p1,uid-p2,uid-p3"}}}
	// The scheduler bound p1 and p2, nominated to the booting claim, to the first node.
	p1, p2, p3 := pod("p1", node.Name, true), pod("p2", node.Name, true), pod("p3", "", true)
	q1, q2, stranger := pod("q1", "", true), pod("q2", "", true), pod("stranger", "", false)
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{first, booting}, Objects: []runtime.Object{node, p1, p2, p3, q1, q2, stranger}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	got := noms.Of([]*corev1.Pod{p3, q1, q2, stranger}, now)
	want := map[string]string{"uid-p3": booting.Name, "uid-q1": booting.Name, "uid-q2": booting.Name}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// cpuPod is a pod asking for cpu: Running on node, or pending
// (Unschedulable) when node is empty.
func cpuPod(name, node, cpu string) *corev1.Pod {
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

// twoCPUNode is a Ready node with 2 CPUs and 20 pods allocatable.
func twoCPUNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}
