package kube_test

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ValidNodePool gives one pool as NodePools does (defaulted), and nothing
// for a pool that is missing or invalid.
func TestValidNodePool(t *testing.T) {
	good := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "good"}}
	good.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	bad := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}
	bad.Spec.Template.Spec.NodeClassRef = good.Spec.Template.Spec.NodeClassRef
	bad.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: "kubernetes.io/arch", Operator: "Roughly"}}
	cl := kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{good, bad}}).Cluster
	valid, invalid := cl.NodePools()
	if len(valid) != 1 || len(invalid) != 1 {
		t.Fatalf("NodePools: %d valid, %d invalid; want 1 and 1", len(valid), len(invalid))
	}
	np, ok := cl.ValidNodePool("good")
	if !ok || np.Spec.Template.Spec.ExpireAfter != valid[0].Spec.Template.Spec.ExpireAfter || np.Spec.Template.Spec.ExpireAfter == "" {
		t.Fatalf("ValidNodePool(good) = %+v, %v; want it defaulted as NodePools gives it", np, ok)
	}
	if _, ok := cl.ValidNodePool("bad"); ok {
		t.Fatal("ValidNodePool(bad) is ok, want false (its requirement's operator is invalid)")
	}
	if _, ok := cl.ValidNodePool("missing"); ok {
		t.Fatal("ValidNodePool(missing) is ok")
	}
}
