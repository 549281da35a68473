package controller

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The NodePool status loop annotates each pool with its template hash and
// the hash's version (karpenter.sh/nodepool-hash, -version), as Karpenter's
// hash controller does, keeping the pool's other annotations.
func TestNodePoolStatusWritesThePoolsHash(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose", Annotations: map[string]string{"team": "a"}},
		Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
			NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}}}}}
	want := disruption.NodePoolHash(np)
	f := kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{np}})
	(&nodePoolStatus{cl: f.Cluster, log: zap.NewNop()}).once(context.Background())
	u, err := f.Dynamic.Resource(apiv1.NodePoolGVR).Get(context.Background(), "general-purpose", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := u.GetAnnotations()
	if got[apiv1.AnnotationNodePoolHash] != want || got[apiv1.AnnotationNodePoolHashVersion] != disruption.NodePoolHashVersion || got["team"] != "a" {
		t.Fatalf("annotations %v, want hash %s, version %s and team=a", got, want, disruption.NodePoolHashVersion)
	}
	// Once the informer has the annotated pool, a second pass writes nothing.
	testwait.Eventually(t, "annotated pool cached", 0, func() bool {
		pools, _ := f.Cluster.NodePools()
		return len(pools) == 1 && pools[0].Annotations[apiv1.AnnotationNodePoolHash] == want
	})
	before := len(f.Dynamic.Actions())
	(&nodePoolStatus{cl: f.Cluster, log: zap.NewNop()}).once(context.Background())
	for _, a := range f.Dynamic.Actions()[before:] {
		if a.GetVerb() == "patch" && a.GetSubresource() == "" {
			t.Errorf("second pass patched the pool again: %v", a)
		}
	}
}
