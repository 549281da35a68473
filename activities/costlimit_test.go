package activities

import (
	"context"
	"math"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/kube/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// costWorld is a pool "capped" with a USD/hour limit and four NodeClaims:
// a launched m6i.large on demand (0.096), one in flight that may be
// m6i.large or m6i.xlarge on demand (counted at the dearer, 0.192), one
// being deleted and one of another pool (neither counted).
func costWorld(prepare func(*kube.Cluster)) kubetest.World {
	ref := &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	capped := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "capped", Annotations: map[string]string{apiv1.AnnotationLimitUSDPerHour: "1"}}}
	capped.Spec.Template.Spec.NodeClassRef = ref
	capped.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"m6i"}}}
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}},
		Status: apiv1.EC2NodeClassStatus{
			AMIs: []apiv1.AMIStatus{{ID: "ami-1", Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
			Subnets:    []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}},
			Conditions: []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Ready"}},
		}}
	claim := func(name, pool string, labels map[string]string, reqs ...apiv1.NodeSelectorRequirementWithMinValues) *apiv1.NodeClaim {
		l := map[string]string{apiv1.LabelNodePool: pool}
		for k, v := range labels {
			l[k] = v
		}
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
			Spec: apiv1.NodeClaimSpec{NodeClassRef: ref, Requirements: reqs}}
	}
	launched := claim("capped-launched", "capped", map[string]string{apiv1.LabelInstanceType: "m6i.large",
		apiv1.LabelZone: "us-east-1a", apiv1.LabelCapacityType: apiv1.CapacityTypeOnDemand})
	inflight := claim("capped-inflight", "capped", nil,
		apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m6i.large", "m6i.xlarge"}},
		apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}})
	deleting := claim("capped-deleting", "capped", map[string]string{apiv1.LabelInstanceType: "m6i.32xlarge"})
	now := metav1.Now()
	deleting.DeletionTimestamp, deleting.Finalizers = &now, []string{apiv1.FinalizerTermination}
	other := claim("other-x", "other", map[string]string{apiv1.LabelInstanceType: "m6i.32xlarge"})
	return kubetest.World{Prepare: prepare, Pools: []*apiv1.NodePool{capped}, Classes: []*apiv1.EC2NodeClass{cls},
		Claims: []*apiv1.NodeClaim{launched, inflight, deleting, other}}
}

func costUsage(t *testing.T, a *Activities) float64 {
	t.Helper()
	snap, err := a.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range snap.input.NodePools {
		if sp.Name == "capped" {
			if !sp.HasCostLimit || sp.CostLimit != 1 {
				t.Fatalf("limit %v %v, want 1", sp.HasCostLimit, sp.CostLimit)
			}
			return sp.CostUsage
		}
	}
	t.Fatal("pool capped not in the snapshot")
	return 0
}

func TestSnapshotCountsNodeClaimsAgainstTheUSDLimit(t *testing.T) {
	if got := costUsage(t, newFake(t, costWorld(nil))); math.Abs(got-0.288) > 1e-9 {
		t.Errorf("cost usage %v, want 0.288 (0.096 launched + 0.192 in flight)", got)
	}
	// A NodeOverlay halving m6i halves what the claims count.
	adj := "-50%"
	ov := &v1alpha1.NodeOverlay{TypeMeta: metav1.TypeMeta{APIVersion: "karpenter.sh/v1alpha1", Kind: "NodeOverlay"},
		ObjectMeta: metav1.ObjectMeta{Name: "savings"},
		Spec: v1alpha1.NodeOverlaySpec{PriceAdjustment: &adj,
			Requirements: []v1alpha1.NodeSelectorRequirement{{Key: apiv1.LabelInstanceFamily, Operator: "In", Values: []string{"m6i"}}}}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ov)
	if err != nil {
		t.Fatal(err)
	}
	a := newFake(t, costWorld(func(cl *kube.Cluster) {
		if err := cl.WatchNodeOverlays(); err != nil {
			t.Fatal(err)
		}
	}))
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
	if got := costUsage(t, a); math.Abs(got-0.144) > 1e-9 {
		t.Errorf("cost usage after -50%% on m6i: %v, want 0.144", got)
	}
}
