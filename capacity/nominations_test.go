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
	// Past the window too, but g is pointed at its Ready node (the
	// scheduler has not got to it yet) and h's pointer is due: both stay
	// nominated.
	pointedNode := twoCPUNode()
	pointedNode.Name = "ip-10-0-0-10.ec2.internal"
	pointed := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-pointed",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-g,uid-h"}},
		Status: apiv1.NodeClaimStatus{NodeName: pointedNode.Name, Conditions: expired.Status.Conditions}}
	// Past HintWait: i, pointed, stays; j, never pointed, is planned again.
	staleNode := twoCPUNode()
	staleNode.Name = "ip-10-0-0-11.ec2.internal"
	stale := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-stale",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-i,uid-j"}},
		Status: apiv1.NodeClaimStatus{NodeName: staleNode.Name, Conditions: []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True",
			LastTransitionTime: metav1.NewTime(now.Add(-HintWait - time.Second))}}}}
	a, b, c := cpuPod("a", "", "800m"), cpuPod("b", "", "500m"), cpuPod("c", "", "200m")
	d, e, f := cpuPod("d", "", "4"), cpuPod("e", "", "4"), cpuPod("f", "", "1")
	g, h := cpuPod("g", "", "1"), cpuPod("h", "", "1")
	i, j := cpuPod("i", "", "1"), cpuPod("j", "", "1")
	g.Status.NominatedNodeName = pointedNode.Name
	i.Status.NominatedNodeName = staleNode.Name
	// The scheduler bound another pod there first: 1 CPU left of 2.
	other := cpuPod("other", node.Name, "1")
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{ready, inflight, expired, pointed, stale},
		Objects: []runtime.Object{node, pointedNode, staleNode, a, b, c, d, e, f, g, h, i, j, other}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	w := noms.Explain([]*corev1.Pod{a, b, c, d, e, f, g, h, i, j}, now)
	got, lapsed := w.Claim, w.Lapsed
	want := map[string]string{"uid-a": ready.Name, "uid-c": ready.Name, "uid-d": inflight.Name, "uid-e": inflight.Name,
		"uid-h": pointed.Name}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// g and i are the scheduler's: pointed at Ready nodes with room.
	if len(w.Held) != 2 || w.Held["uid-g"] != pointedNode.Name || w.Held["uid-i"] != staleNode.Name {
		t.Fatalf("held %v, want g on %s and i on %s", w.Held, pointedNode.Name, staleNode.Name)
	}
	if lapsed != (Lapsed{Window: 2, Displaced: 1}) {
		t.Fatalf("lapsed %+v, want f and j by the window and b displaced", lapsed)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v (b, 500m, no longer fits the 200m left)", got, want)
		}
	}
	// The provisioner sees b as work to do now, not after the window.
	ledger := NewLedger(nil, zap.NewNop(), cl.ProvisionablePods, noms.Waiting, noms.Window)
	if n := ledger.UnnominatedPending(now); n != 3 {
		t.Fatalf("UnnominatedPending = %d, want 3 (pods b, f and j)", n)
	}
	// Without scheduler hints no pointer is due: h, past the window and
	// never pointed, is planned again at once; g, pointed, stays.
	noms.WithoutHints()
	w = noms.Explain([]*corev1.Pod{a, b, c, d, e, f, g, h, i, j}, now)
	if _, ok := w.Claim["uid-h"]; ok || w.Held["uid-g"] != pointedNode.Name || w.Lapsed.Window != 3 {
		t.Fatalf("without hints: got %v, lapsed %+v; want h lapsed by the window with f and j, g held", w.Claim, w.Lapsed)
	}
}

// The nodes of one wave come Ready one by one, and the scheduler binds
// to the first whichever pending pods it picks: a pod whose place on its
// Ready node was taken by a pod nominated to a claim still booting keeps a
// nomination, to that claim, when it is interchangeable with that pod (of
// its controller, or constraining only its node, alike); a pod spread by
// zone whose owner has no place there is planned again.
func TestDisplacedNomineeTakesThePlaceOnTheBootingClaim(t *testing.T) {
	now := time.Now()
	web := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-web", Controller: ptrTo(true)}
	api := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "api-1", UID: "rs-api", Controller: ptrTo(true)}
	pod := func(name, node string, owner metav1.OwnerReference) *corev1.Pod {
		p := cpuPod(name, node, "1")
		p.OwnerReferences = []metav1.OwnerReference{owner}
		return p
	}
	node := twoCPUNode()
	first := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "wave-a-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-q1,uid-other,uid-spread"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	booting := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "wave-b-booting",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-p1,uid-p2,uid-p3"}}}
	// The scheduler bound p1 and p2, nominated to the booting claim, to the first node.
	p1, p2, p3 := pod("p1", node.Name, web), pod("p2", node.Name, web), pod("p3", "", web)
	q1, other, spread := pod("q1", "", web), pod("other", "", api), pod("spread", "", api)
	spread.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}}}
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{first, booting}, Objects: []runtime.Object{node, p1, p2, p3, q1, other, spread}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	w := noms.Explain([]*corev1.Pod{p3, q1, other, spread}, now)
	got, lapsed := w.Claim, w.Lapsed
	want := map[string]string{"uid-p3": booting.Name, "uid-q1": booting.Name, "uid-other": booting.Name}
	if len(got) != len(want) || lapsed.Displaced != 1 {
		t.Fatalf("got %v (%d displaced), want %v (spread displaced)", got, lapsed.Displaced, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// The room a booting claim's nominee left counts wherever the scheduler
// bound it (here a node no live claim has), and the displaced pods take
// the places biggest first: the 2-CPU pod gets the whole 2 CPUs left on
// one claim, the 1-CPU pod the 1 CPU on the other.
func TestDisplacedPodsTakePlacesBiggestFirst(t *testing.T) {
	now := time.Now()
	node := twoCPUNode()
	elsewhere := twoCPUNode()
	elsewhere.Name = "ip-10-0-0-99.ec2.internal"
	ready := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "a-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-small,uid-big"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	two := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "b-booting-two",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-x1,uid-x2"}}}
	one := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c-booting-one",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-x3"}}}
	// x1 and x2 took the ready node; x3 went to a node of no claim.
	x1, x2, x3 := cpuPod("x1", node.Name, "1"), cpuPod("x2", node.Name, "1"), cpuPod("x3", elsewhere.Name, "1")
	small, big := cpuPod("small", "", "1"), cpuPod("big", "", "2")
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{ready, two, one},
		Objects: []runtime.Object{node, elsewhere, x1, x2, x3, small, big}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	w := noms.Explain([]*corev1.Pod{small, big}, now)
	got, lapsed := w.Claim, w.Lapsed
	if got["uid-big"] != two.Name || got["uid-small"] != one.Name || lapsed.Displaced != 0 {
		t.Fatalf("got %v (%d displaced), want big on %s and small on %s", got, lapsed.Displaced, two.Name, one.Name)
	}
}

// Pods that constrain only their node, alike, share a place key whoever
// owns them; pods that constrain where they stand against other pods take
// only their own controller's places.
func TestPlaceKey(t *testing.T) {
	owned := func(uid string) *corev1.Pod {
		p := cpuPod("p-"+uid, "", "1")
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: uid, UID: types.UID(uid), Controller: ptrTo(true)}}
		return p
	}
	a, b := owned("a"), owned("b")
	if placeKey(a) == "" || placeKey(a) != placeKey(b) {
		t.Fatalf("unconstrained pods of two owners: %q, %q, want one key", placeKey(a), placeKey(b))
	}
	arm := owned("c")
	arm.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
	if placeKey(arm) == placeKey(a) {
		t.Fatalf("a node selector left the key %q", placeKey(arm))
	}
	anti := owned("d")
	anti.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	if placeKey(anti) != "owner/default/d" {
		t.Fatalf("pod anti-affinity: key %q, want its owner's", placeKey(anti))
	}
	claimed := cpuPod("claimed", "", "1")
	claimed.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	if placeKey(claimed) != "" {
		t.Fatalf("an ownerless pod with a claimed volume: key %q, want none", placeKey(claimed))
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

// A pending pod pointed at a Node (by Joinery or the scheduler's
// preemption) is the scheduler's while the pointer holds: the Node is open
// to it and has its room. It is Held there, its room is taken from the
// claim nominated to that Node, and the ledger does not count it; a pod
// pointed where it has no room, or at a cordoned Node, is work for a plan.
func TestPointedPodsAreHeldForTheScheduler(t *testing.T) {
	now := time.Now()
	node := twoCPUNode()
	cordoned := twoCPUNode()
	cordoned.Name = "ip-10-0-0-12.ec2.internal"
	cordoned.Spec.Unschedulable = true
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-ready",
		Annotations: map[string]string{AnnotationNominatedPods: "uid-n1,uid-n2"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	// p1 then p2 are pointed at the node: 1.5 CPU of its 2 go to p1, so
	// p2 (1 CPU) has no room behind its pointer; of the claim's nominees
	// n1 (500m) fits what is left, n2 does not. c is pointed at a
	// cordoned node.
	p1, p2 := cpuPod("p1", "", "1500m"), cpuPod("p2", "", "1")
	n1, n2 := cpuPod("n1", "", "500m"), cpuPod("n2", "", "500m")
	c := cpuPod("c", "", "1")
	p1.Status.NominatedNodeName, p2.Status.NominatedNodeName = node.Name, node.Name
	c.Status.NominatedNodeName = cordoned.Name
	cl := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim},
		Objects: []runtime.Object{node, cordoned, p1, p2, n1, n2, c}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })

	w := noms.Explain([]*corev1.Pod{c, n1, n2, p1, p2}, now)
	if len(w.Held) != 1 || w.Held["uid-p1"] != node.Name {
		t.Fatalf("held %v, want only p1 on %s", w.Held, node.Name)
	}
	if len(w.Claim) != 1 || w.Claim["uid-n1"] != claim.Name || w.Lapsed.Displaced != 1 {
		t.Fatalf("claim nominations %v (%d displaced), want n1 kept and n2 displaced by the held p1", w.Claim, w.Lapsed.Displaced)
	}
	ledger := NewLedger(nil, zap.NewNop(), cl.ProvisionablePods, noms.Waiting, noms.Window)
	if n := ledger.PendingToPlan(now); n != 3 {
		t.Fatalf("PendingToPlan = %d, want 3 (c, n2 and p2)", n)
	}
}

// A DaemonSet pod made for a node and not bound yet takes its room before
// any pointed pod: the scheduler binds it there, so a pod pointed at what
// it will use is not held (it is planned) and one that fits beside it is.
func TestHeldPodsLeaveRoomForPendingDaemonPods(t *testing.T) {
	node := twoCPUNode()
	yes := true
	agent := cpuPod("agent-x", "", "1")
	agent.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u-agent", Controller: &yes}}
	agent.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node.Name}}}}}}}}
	big, small := cpuPod("big", "", "1500m"), cpuPod("small", "", "1")
	big.Status.NominatedNodeName, small.Status.NominatedNodeName = node.Name, node.Name
	cl := kubetest.Start(t, kubetest.World{Objects: []runtime.Object{node, agent, big, small}}).Cluster
	noms := NewNominations(cl, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })
	w := noms.Explain([]*corev1.Pod{big, small}, time.Now())
	if len(w.Held) != 1 || w.Held["uid-small"] != node.Name {
		t.Fatalf("held %v, want only small (the agent's 1 CPU leaves 1 CPU)", w.Held)
	}
}
