package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
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
	pod := unschedulablePod("web-1")
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
	clearPointer(t, f, "web-1", node.Name)
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
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400"), corev1.ResourcePods: resource.MustParse("400")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	objs := []runtime.Object{node}
	var uids []string
	for i := range pods {
		name := fmt.Sprintf("web-%d", i)
		uids = append(uids, "uid-"+name)
		objs = append(objs, unschedulablePod(name))
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
	if !opening(t, f, node.Name) {
		t.Fatal("node opened with pointers still to write")
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
	if opening(t, f, node.Name) {
		t.Fatal("node still closed with every pointer written")
	}
}

// opening reads whether the Node still carries the opening taint.
func opening(t *testing.T, f *kubetest.Fake, name string) bool {
	t.Helper()
	n, err := f.Kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return lifecycle.Opening(n)
}

// A Ready node that registered closed opens once the pods launched for it
// are pointed at it, not before; one no pod waits for opens at the first
// pass, one not Ready stays closed; without hints nodes open unpointed.
func TestNodesOpenOncePointed(t *testing.T) {
	ctx := context.Background()
	node := func(name string, ready bool) *corev1.Node {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
	}
	for _, hints := range []bool{true, false} {
		nominee, idle, booting := node("ip-10-0-0-1.ec2.internal", true), node("ip-10-0-0-2.ec2.internal", true), node("ip-10-0-0-3.ec2.internal", false)
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x3",
			Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1"}},
			Status: apiv1.NodeClaimStatus{NodeName: nominee.Name}}
		pod := unschedulablePod("web-1")
		f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{nominee, idle, booting, pod}})
		noms := capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false })
		if !hints {
			noms.WithoutHints()
		}
		h := newSchedulerHints(f.Cluster, noms, zap.NewNop())
		f.Kube.ClearActions()
		h.pass(ctx, time.Now())
		if opening(t, f, nominee.Name) || opening(t, f, idle.Name) || !opening(t, f, booting.Name) {
			t.Fatalf("hints %v: opening after a pass: nominee's %v, idle %v, booting %v, want false, false, true", hints,
				opening(t, f, nominee.Name), opening(t, f, idle.Name), opening(t, f, booting.Name))
		}
		order := writeOrder(f)
		want := []string{"pointer", "open", "open"}
		if !hints {
			want = []string{"open", "open"}
		}
		if !slices.Equal(order, want) {
			t.Errorf("hints %v: writes %v, want %v", hints, order, want)
		}
	}
}

// A Ready node whose nominee cannot be pointed at it yet (a startup taint
// the pod does not tolerate) stays closed, until openingHold has passed
// since it turned Ready.
func TestNodeWaitsForANomineeItCannotPointYet(t *testing.T) {
	ctx := context.Background()
	agent := corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-4.ec2.internal"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{agent, lifecycle.OpeningTaint}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x4",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{node, unschedulablePod("web-1")}})
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.NewNop())
	h.pass(ctx, time.Now())
	if !opening(t, f, node.Name) {
		t.Fatal("node opened while its nominee waits for the agent's taint to go")
	}
	h.pass(ctx, time.Now().Add(openingHold))
	if opening(t, f, node.Name) {
		t.Fatal("node still closed past openingHold")
	}
}

// unschedulablePod is a pending pod (UID uid-<name>) asking for 1 CPU that
// the scheduler found no node for.
func unschedulablePod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable}}}}
}

// A pointer the scheduler clears while its node is still closed, or in
// the moment it opens, is written again (once, past the opening); one
// cleared on a node that was never held closed stands
// (TestSchedulerHintsPointPodsAtTheirNodeOnce).
func TestPointerLostAsTheNodeOpensIsWrittenAgain(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-8.ec2.internal"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x8",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{node, unschedulablePod("web-1")}})
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.NewNop())
	nominated := func() string {
		p, err := f.Kube.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Status.NominatedNodeName
	}
	clear := func() { clearPointer(t, f, "web-1", node.Name) }

	h.pass(ctx, time.Now())
	if got := nominated(); got != node.Name || opening(t, f, node.Name) {
		t.Fatalf("after a pass: pointer %q, node closed %v; want %s, open", got, opening(t, f, node.Name), node.Name)
	}
	clear() // tried in the moment the node opened
	h.pass(ctx, time.Now())
	if got := nominated(); got != node.Name {
		t.Fatalf("pointer lost as the node opened: %q after the next pass, want %s again", got, node.Name)
	}
	clear() // tried again: it does not fit there after all
	h.pass(ctx, time.Now())
	if got := nominated(); got != "" {
		t.Fatalf("pointer written a third time: %q", got)
	}
}

// A node whose pointer the scheduler clears while it is closed stays
// closed until that pod is pointed again, even when its other pointers
// are written meanwhile; then it opens.
func TestNodeWaitsForAPointerLostBeforeItOpens(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x9",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1,uid-web-2"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{node, unschedulablePod("web-1"), unschedulablePod("web-2")}})
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.NewNop())
	h.perPass = 1 // one pointer a pass: the node waits for the second
	written := []string{}
	f.Kube.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.PatchAction).GetName()
		written = append(written, name)
		if len(written) == 2 { // the scheduler tried the first while the node was closed
			first := unschedulablePod(written[0])
			pointed := first.DeepCopy()
			pointed.Status.NominatedNodeName = node.Name
			h.pointerCleared(pointed, first)
		}
		return false, nil, nil
	})
	h.pass(ctx, time.Now())
	h.pass(ctx, time.Now())
	if !opening(t, f, node.Name) {
		t.Fatalf("node opened after writes %v, with %s's pointer cleared before it opened", written, written[0])
	}
	clearPointer(t, f, written[0], node.Name) // as the scheduler left it
	h.pass(ctx, time.Now())
	if opening(t, f, node.Name) {
		t.Fatalf("node still closed after writes %v: the lost pointer was written again", written)
	}
	if len(written) != 3 || written[2] != written[0] {
		t.Errorf("pointer writes %v, want the first pod's again last", written)
	}
}

// clearPointer is the scheduler's failed attempt of a pod pointed at node:
// its pointer cleared, once the cache had it, and the clear cached.
func clearPointer(t *testing.T, f *kubetest.Fake, pod, node string) {
	t.Helper()
	cached := func(want string) func() bool {
		return func() bool {
			c, err := f.Cluster.Pods.Pods("default").Get(pod)
			return err == nil && c.Status.NominatedNodeName == want
		}
	}
	testwait.Eventually(t, "pointer cached", 0, cached(node))
	p, err := f.Kube.CoreV1().Pods("default").Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.NominatedNodeName = ""
	if _, err := f.Kube.CoreV1().Pods("default").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "cleared pointer cached", 0, cached(""))
}

// A Ready node kept closed for closedTooLong (here: its nominee waits for
// a startup taint to go) is reported once, with what it waits for.
func TestANodeKeptClosedIsReported(t *testing.T) {
	ctx := context.Background()
	agent := corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	start := time.Now()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-5.ec2.internal"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{agent, lifecycle.OpeningTaint}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(start)}}}}
	claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x5",
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-web-1"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim}, Objects: []runtime.Object{node, unschedulablePod("web-1")}})
	core, logs := observer.New(zap.WarnLevel)
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.New(core))
	for _, after := range []time.Duration{0, closedTooLong / 2, closedTooLong, closedTooLong + time.Second} {
		h.pass(ctx, start.Add(after))
	}
	got := logs.FilterMessage("node kept closed to pending pods").All()
	if len(got) != 1 {
		t.Fatalf("%d reports of the closed node, want 1 (logs %v)", len(got), logs.All())
	}
	h.opened[node.Name] = start // opened by a pass, not yet so in the cache
	h.closed[node.Name] = closedNode{since: start}
	h.reportClosed(nil, nil, start.Add(2*closedTooLong))
	if n := len(logs.FilterMessage("node kept closed to pending pods").All()); n != 1 {
		t.Errorf("%d reports, want none for a node this pass opened", n-1)
	}
	fields := got[0].ContextMap()
	if fields["node"] != node.Name || fields["waitsForNextPass"] != true || fields["closedFor"] != closedTooLong {
		t.Errorf("report %v", fields)
	}
}

// The nodes of a pass open together once every pointer of the pass is
// written and cached: a node opening sets off the scheduler's attempt of
// every pending pod, and one pointed at a node still closed would lose its
// pointer.
func TestNodesOfAPassOpenTogether(t *testing.T) {
	ctx := context.Background()
	objs := []runtime.Object{}
	var claims []*apiv1.NodeClaim
	for i, pods := range []int{1, 12} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-0-1-%d.ec2.internal", i)}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourcePods: resource.MustParse("20")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		var uids []string
		for j := range pods {
			p := unschedulablePod(fmt.Sprintf("web-%d-%d", i, j))
			objs = append(objs, p)
			uids = append(uids, string(p.UID))
		}
		objs = append(objs, node)
		claims = append(claims, &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("general-purpose-y%d", i),
			Annotations: map[string]string{capacity.AnnotationNominatedPods: strings.Join(uids, ",")}},
			Status: apiv1.NodeClaimStatus{NodeName: node.Name}})
	}
	f := kubetest.Start(t, kubetest.World{Claims: claims, Objects: objs})
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.NewNop())
	f.Kube.ClearActions()
	h.pass(ctx, time.Now())
	order := writeOrder(f)
	want := append(slices.Repeat([]string{"pointer"}, 13), "open", "open")
	if !slices.Equal(order, want) {
		t.Errorf("writes %v, want every pointer before any opening", order)
	}
}

// writeOrder are the pointer writes and node openings the fake API server
// saw, in order.
func writeOrder(f *kubetest.Fake) []string {
	var order []string
	for _, a := range f.Kube.Actions() {
		switch {
		case a.GetResource().Resource == "pods" && a.GetSubresource() == "status":
			order = append(order, "pointer")
		case a.GetResource().Resource == "nodes" && a.GetVerb() == "update":
			order = append(order, "open")
		}
	}
	return order
}

// A node that turns Ready while a pass writes its pointers stays closed
// until the next pass has pointed its pods at it.
func TestNodeReadyDuringAPassWaitsForItsPointers(t *testing.T) {
	ctx := context.Background()
	node := func(name string, ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{lifecycle.OpeningTaint}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("20")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	first, late := node("ip-10-0-2-1.ec2.internal", corev1.ConditionTrue), node("ip-10-0-2-2.ec2.internal", corev1.ConditionFalse)
	claim := func(name, node, uid string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{capacity.AnnotationNominatedPods: uid}},
			Status: apiv1.NodeClaimStatus{NodeName: node}}
	}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim("general-purpose-z1", first.Name, "uid-web-1"), claim("general-purpose-z2", late.Name, "uid-web-2")},
		Objects: []runtime.Object{first, late, unschedulablePod("web-1"), unschedulablePod("web-2")}})
	h := newSchedulerHints(f.Cluster, capacity.NewNominations(f.Cluster, 0, func(*apiv1.NodeClaim, time.Time) bool { return false }), zap.NewNop())
	turned := false
	f.Kube.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !turned { // the late node turns Ready while the first pointer is written
			turned = true
			ready := late.DeepCopy()
			ready.Status.Conditions[0].Status = corev1.ConditionTrue
			if err := f.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("nodes"), ready, ""); err != nil {
				t.Error(err)
			}
			testwait.Eventually(t, "the late node Ready in the cache", 0, func() bool {
				n, err := f.Cluster.Nodes.Get(late.Name)
				return err == nil && lifecycle.Ready(n)
			})
		}
		return false, nil, nil
	})
	h.pass(ctx, time.Now())
	if opening(t, f, first.Name) || !opening(t, f, late.Name) {
		t.Fatalf("after the first pass: first node closed %v, late node closed %v; want open, closed",
			opening(t, f, first.Name), opening(t, f, late.Name))
	}
	h.pass(ctx, time.Now())
	p, err := f.Kube.CoreV1().Pods("default").Get(ctx, "web-2", metav1.GetOptions{})
	if err != nil || p.Status.NominatedNodeName != late.Name || opening(t, f, late.Name) {
		t.Errorf("after the second pass: web-2 pointed at %q (err %v), late node closed %v; want pointed and open", p.Status.NominatedNodeName, err, opening(t, f, late.Name))
	}
}
