package activities

import (
	"context"
	"reflect"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// A retried plan discards the NodeClaims its failed attempt wrote (same
// batch label) and leaves every other NodeClaim alone.
func TestDiscardBatch(t *testing.T) {
	mk := func(name, batch string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{apiv1.LabelNodePool: "general-purpose", LabelProvisionBatch: batch}}}
	}
	a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{mk("general-purpose-aaaaa", "b1"), mk("general-purpose-bbbbb", "b1"), mk("general-purpose-ccccc", "b2")}})
	if err := a.Provisioning.claims.discardBatch(context.Background(), "b1"); err != nil {
		t.Fatal(err)
	}
	list, err := a.cluster().Dynamic.Resource(apiv1.NodeClaimGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "general-purpose-ccccc" {
		var names []string
		for _, u := range list.Items {
			names = append(names, u.GetName())
		}
		t.Fatalf("left %v, want only general-purpose-ccccc", names)
	}
	// Outside an activity (first attempt semantics): nothing is discarded.
	if b, err := a.Provisioning.claims.discardEarlierAttempt(context.Background()); b != "" || err != nil {
		t.Fatalf("discardEarlierAttempt outside an activity = %q, %v", b, err)
	}
}

// A pending pod with DRA resource claims gets a FailedScheduling Event
// naming its claims (solver.Pod.Refused reaches the Event unchanged), and
// the plan lists it unschedulable.
func TestPlanReportsDRAPodFailedScheduling(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "trainer", UID: "uid-trainer"},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}, ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu-claim"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	a := newFake(t, kubetest.World{Objects: []runtime.Object{p}})
	rec := record.NewFakeRecorder(10)
	a.cluster().Recorder = rec
	out, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{})
	if err != nil {
		t.Fatal(err)
	}
	reason := "pod requests DRA resource claims (spec.resourceClaims: gpu-claim); Joinery does not provision for dynamic resource allocation"
	if want := []string{"default/trainer: " + reason}; !reflect.DeepEqual(out.Unschedulable, want) || len(out.NodeClaims) != 0 {
		t.Errorf("plan unschedulable %q, %d NodeClaims; want %q and none", out.Unschedulable, len(out.NodeClaims), want)
	}
	select {
	case ev := <-rec.Events:
		if want := "Warning FailedScheduling Failed to schedule pod, " + reason; ev != want {
			t.Errorf("Event %q, want %q", ev, want)
		}
	default:
		t.Error("no FailedScheduling Event")
	}
}
