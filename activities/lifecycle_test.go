package activities

import (
	"errors"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WaitForNodeReady finds the Node by provider ID in the cache, registers it
// (unregistered taint removed, label set, NodeClaim status), then
// initializes it once the cache shows it Ready without that taint; a
// NodeClaim that is gone fails for good.
func TestWaitForNodeReady(t *testing.T) {
	const pid = "aws:///us-east-1a/i-0abc"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-7.ec2.internal"},
		Spec:   corev1.NodeSpec{ProviderID: pid, Taints: []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-q9x2w", Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
		Status: apiv1.NodeClaimStatus{ProviderID: pid}}
	a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{nc}, Objects: []runtime.Object{node}})
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Lifecycle.WaitForNodeReady, activity.RegisterOptions{Name: workflows.ActivityWaitForNode})
	v, err := env.ExecuteActivity(workflows.ActivityWaitForNode, workflows.NodeClaimLaunched{NodeClaim: nc.Name, Instance: workflows.Instance{ID: "i-0abc", ProviderID: pid}})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.NodeReady
	if err := v.Get(&res); err != nil || res.NodeName != node.Name {
		t.Fatalf("result %+v, err %v", res, err)
	}
	got, err := a.cluster().NodeClaim(t.Context(), nc.Name)
	if err != nil || got.Status.NodeName != node.Name {
		t.Fatalf("NodeClaim status %+v, err %v", got.Status, err)
	}
	for _, c := range []string{apiv1.ConditionRegistered, apiv1.ConditionInitialized} {
		if !conditionTrue(got.Status.Conditions, c) {
			t.Errorf("condition %s missing: %+v", c, got.Status.Conditions)
		}
	}
	n, _ := a.cluster().Kube.CoreV1().Nodes().Get(t.Context(), node.Name, metav1.GetOptions{})
	if disruption.HasTaint(n.Spec.Taints, apiv1.TaintKeyUnregistered) || n.Labels[apiv1.LabelNodeRegistered] != "true" {
		t.Errorf("node after registration: taints %v labels %v", n.Spec.Taints, n.Labels)
	}

	_, err = env.ExecuteActivity(workflows.ActivityWaitForNode, workflows.NodeClaimLaunched{NodeClaim: "general-purpose-gone", Instance: workflows.Instance{ID: "i-0def", ProviderID: "aws:///us-east-1a/i-0def"}})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.ErrNodeClaimGone || !app.NonRetryable() {
		t.Fatalf("missing NodeClaim: %v, want non-retryable %s", err, workflows.ErrNodeClaimGone)
	}
}

func conditionTrue(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}
