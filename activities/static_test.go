package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"
)

func staticFixture(t *testing.T, gate bool) *Activities {
	t.Helper()
	return staticFixtureWith(t, nil, gate)
}

// staticFixturePrepared is staticFixture (gate on) calling prepare on the
// Cluster before its informers start.
func staticFixturePrepared(t *testing.T, prepare func(*kube.Cluster)) *Activities {
	t.Helper()
	return staticFixtureWith(t, prepare, true)
}

func staticFixtureWith(t *testing.T, prepare func(*kube.Cluster), gate bool) *Activities {
	t.Helper()
	ref := &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	reqs := []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"m7i", "c7i"}},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"on-demand"}}}
	gp := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
	gp.Spec.Template.Spec.NodeClassRef, gp.Spec.Template.Spec.Requirements = ref, reqs
	three := int64(3)
	fixed := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}}
	fixed.Spec.Template.Spec.NodeClassRef, fixed.Spec.Template.Spec.Requirements = ref, reqs
	fixed.Spec.Replicas = &three
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}},
		Status: apiv1.EC2NodeClassStatus{
			AMIs: []apiv1.AMIStatus{{ID: "ami-1", Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
			Subnets: []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}, {ID: "subnet-b", Zone: "us-east-1b"},
				{ID: "subnet-c", Zone: "us-east-1c"}},
			Conditions: []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Ready"}},
		}}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable}}}}
	a := newFake(t, kubetest.World{Prepare: prepare, Pools: []*apiv1.NodePool{gp, fixed}, Classes: []*apiv1.EC2NodeClass{cls}, Objects: []runtime.Object{pending}},
		func(d *Deps) { d.StaticCapacity = gate })
	a.cluster().Recorder = record.NewFakeRecorder(10)
	return a
}

// With StaticCapacity on, a static pool is out of the provisioner's pools
// (a pending pod is planned on the dynamic pool only) and kept for the
// static reconciler; off, it is reported not honoured, naming the gate.
func TestSnapshotStaticPools(t *testing.T) {
	a := staticFixture(t, true)
	snap, err := a.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.input.NodePools) != 1 || snap.input.NodePools[0].Name != "gp" {
		t.Fatalf("provisioner pools %d, want only gp", len(snap.input.NodePools))
	}
	if sp, ok := snap.static["fixed"]; !ok || len(sp.InstanceTypes) == 0 {
		t.Fatalf("static pool fixed missing or without instance types")
	}
	if snap.pools["fixed"] == nil {
		t.Error("static pool not in snap.pools (NodeClaims are written from it)")
	}

	off := staticFixture(t, false)
	snap, err = off.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.static["fixed"]; ok || len(snap.input.NodePools) != 1 {
		t.Errorf("gate off: static pool used")
	}
	select {
	case ev := <-off.cluster().Recorder.(*record.FakeRecorder).Events:
		if !strings.Contains(ev, "InvalidNodePool") || !strings.Contains(ev, "StaticCapacity=true") || !strings.Contains(ev, "spec.replicas") {
			t.Errorf("event %q", ev)
		}
	default:
		t.Error("gate off: no Event on the static pool")
	}
}

// Three launches of a static pool: three NodeClaims of the pool, their
// offerings the pool's cheapest types, one per zone.
func TestCreateStaticNodeClaims(t *testing.T) {
	a := staticFixture(t, true)
	out, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{StaticPool: "fixed", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.UnschedulableTotal != 0 {
		t.Errorf("short: %v", out.Unschedulable)
	}
	if len(out.NodeClaims) != 3 {
		t.Fatalf("%d NodeClaims, want 3", len(out.NodeClaims))
	}
	zones := map[string]int{}
	for _, in := range out.NodeClaims {
		if in.NodePool != "fixed" || !strings.HasPrefix(in.Name, "fixed-") || in.Pods != 0 {
			t.Errorf("input %+v", in)
		}
		zones[in.Offerings[0].Zone]++
		// The cheapest on-demand m7i/c7i type is the smallest: .large.
		if it := in.Offerings[0].InstanceType; !strings.HasSuffix(it, ".large") {
			t.Errorf("%s: first offering %s, want a .large (cheapest)", in.Name, it)
		}
	}
	if len(zones) != 3 {
		t.Errorf("first offerings' zones %v, want one per zone", zones)
	}
	dc := a.cluster().Dynamic.(*dynfake.FakeDynamicClient)
	created := 0
	for _, act := range dc.Actions() {
		if act.GetVerb() == "create" && act.GetResource() == (schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}) {
			created++
		}
	}
	if created != 3 {
		t.Errorf("%d NodeClaims written, want 3", created)
	}
	if _, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{StaticPool: "gp", Count: 1}); err == nil {
		t.Error("a dynamic pool launched as static")
	}
}

// A NodeOverlay prices a static pool too: -30% on m7i makes m7i.large
// (0.1008 -> 0.0706 USD/hour) cheaper than c7i.large (0.0893), so the
// pool's launches go to m7i first.
func TestStaticLaunchesFollowNodeOverlays(t *testing.T) {
	adj := "-30%"
	ov := &v1alpha1.NodeOverlay{TypeMeta: metav1.TypeMeta{APIVersion: "karpenter.sh/v1alpha1", Kind: "NodeOverlay"},
		ObjectMeta: metav1.ObjectMeta{Name: "savings"},
		Spec: v1alpha1.NodeOverlaySpec{PriceAdjustment: &adj,
			Requirements: []v1alpha1.NodeSelectorRequirement{{Key: apiv1.LabelInstanceFamily, Operator: "In", Values: []string{"m7i"}}}}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ov)
	if err != nil {
		t.Fatal(err)
	}
	first := func(a *Activities) string {
		t.Helper()
		out, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{StaticPool: "fixed", Count: 1})
		if err != nil || len(out.NodeClaims) != 1 {
			t.Fatalf("plan: %v, %d NodeClaims", err, len(out.NodeClaims))
		}
		return out.NodeClaims[0].Offerings[0].InstanceType
	}
	if got := first(staticFixture(t, true)); got != "c7i.large" {
		t.Fatalf("without the overlay: first offering %s, want c7i.large", got)
	}
	a := staticFixturePrepared(t, func(cl *kube.Cluster) {
		if err := cl.WatchNodeOverlays(); err != nil {
			t.Fatal(err)
		}
	})
	dc := a.cluster().Dynamic.(*dynfake.FakeDynamicClient)
	if _, err := dc.Resource(v1alpha1.NodeOverlayGVR).Create(context.Background(), &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for list, _ := a.cluster().NodeOverlays(); len(list) == 0; list, _ = a.cluster().NodeOverlays() {
		if time.Now().After(deadline) {
			t.Fatal("NodeOverlay not in the cache")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := first(a); got != "m7i.large" {
		t.Errorf("with -30%% on m7i: first offering %s, want m7i.large", got)
	}
}
