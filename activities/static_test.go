package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"
)

func staticFixture(t *testing.T, gate bool) *Activities {
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
	a := newFakeActivitiesWith(t, []*apiv1.NodePool{gp, fixed}, nil, []*apiv1.EC2NodeClass{cls}, pending)
	a.Cluster.Recorder = record.NewFakeRecorder(10)
	a.StaticCapacity = gate
	return a
}

// With StaticCapacity on, a static pool is out of the provisioner's pools
// (a pending pod is planned on the dynamic pool only) and kept for the
// static reconciler; off, it is reported not honoured, naming the gate.
func TestSnapshotStaticPools(t *testing.T) {
	a := staticFixture(t, true)
	snap, err := a.takeSnapshot(context.Background(), time.Now())
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
	snap, err = off.takeSnapshot(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.static["fixed"]; ok || len(snap.input.NodePools) != 1 {
		t.Errorf("gate off: static pool used")
	}
	select {
	case ev := <-off.Cluster.Recorder.(*record.FakeRecorder).Events:
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
	out, err := a.CreateStaticNodeClaims(context.Background(), "fixed", 3)
	if err != nil {
		t.Fatal(err)
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
	dc := a.Cluster.Dynamic.(*dynfake.FakeDynamicClient)
	created := 0
	for _, act := range dc.Actions() {
		if act.GetVerb() == "create" && act.GetResource() == (schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}) {
			created++
		}
	}
	if created != 3 {
		t.Errorf("%d NodeClaims written, want 3", created)
	}
	if _, err := a.CreateStaticNodeClaims(context.Background(), "gp", 1); err == nil {
		t.Error("a dynamic pool launched as static")
	}
}
