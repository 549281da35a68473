package activities

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestNodePoolConditionsUseKarpentersReasons: a valid pool gets
// ValidationSucceeded, NodeClassReady and Ready True with their own names
// as reasons; an invalid one ValidationSucceeded False
// (NodePoolValidationFailed, naming the field) and Ready False
// (UnhealthyDependents, "ValidationSucceeded=False"), as Karpenter's
// status conditions.
func TestNodePoolConditionsUseKarpentersReasons(t *testing.T) {
	pool := func(name string) *apiv1.NodePool {
		np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 3}}
		np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
		return np
	}
	ok, broken := pool("ok"), pool("broken")
	broken.Spec.Disruption.ConsolidationPolicy = "Sometimes"
	a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{ok, broken}})
	valid, bad := a.cluster().NodePools()
	if len(valid) != 1 || len(bad) != 1 {
		t.Fatalf("valid %d, invalid %d", len(valid), len(bad))
	}
	a.pools.report(context.Background(), valid, bad)
	conds := func(name string) map[string]metav1.Condition {
		u, err := a.cluster().Dynamic.Resource(apiv1.NodePoolGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		np := &apiv1.NodePool{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np); err != nil {
			t.Fatal(err)
		}
		out := map[string]metav1.Condition{}
		for _, c := range np.Status.Conditions {
			out[c.Type] = c
		}
		return out
	}
	got := conds("ok")
	for _, typ := range []string{"ValidationSucceeded", "NodeClassReady", "Ready"} {
		if c := got[typ]; c.Status != metav1.ConditionTrue || c.Reason != typ || c.ObservedGeneration != 3 {
			t.Errorf("ok %s = %+v, want True with reason %s at generation 3", typ, c, typ)
		}
	}
	got = conds("broken")
	if c := got["ValidationSucceeded"]; c.Status != metav1.ConditionFalse || c.Reason != "NodePoolValidationFailed" || c.Message == "" {
		t.Errorf("broken ValidationSucceeded = %+v", c)
	}
	if c := got["Ready"]; c.Status != metav1.ConditionFalse || c.Reason != "UnhealthyDependents" || c.Message != "ValidationSucceeded=False" {
		t.Errorf("broken Ready = %+v", c)
	}
}
