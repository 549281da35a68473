// Package kubetest builds a kube.Cluster over client-go's fake clientsets for
// unit tests: the objects given, the Karpenter kinds served by the dynamic
// fake, and (with Start) the informers synced.
package kubetest

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/providers/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// World is what the fakes hold at start.
type World struct {
	Pools   []*apiv1.NodePool
	Claims  []*apiv1.NodeClaim
	Classes []*apiv1.EC2NodeClass
	// Objects are built-in kinds (Pods, Nodes, ...) for the typed fake.
	Objects []runtime.Object
	// Prepare, when set, runs on the Cluster before its informers start.
	Prepare func(*kube.Cluster)
}

// Fake is a Cluster over fakes, with the fakes to inspect their actions.
type Fake struct {
	*kube.Cluster
	Kube    *kubefake.Clientset
	Dynamic *dynfake.FakeDynamicClient
}

// New builds the Cluster without starting it.
func New(t testing.TB, w World) *Fake {
	t.Helper()
	var dyn []runtime.Object
	for _, np := range w.Pools {
		np.APIVersion, np.Kind = "karpenter.sh/v1", "NodePool"
		dyn = append(dyn, Unstructured(t, np))
	}
	for _, nc := range w.Claims {
		nc.APIVersion, nc.Kind = "karpenter.sh/v1", "NodeClaim"
		dyn = append(dyn, Unstructured(t, nc))
	}
	for _, cls := range w.Classes {
		cls.APIVersion, cls.Kind = "karpenter.k8s.aws/v1", "EC2NodeClass"
		dyn = append(dyn, Unstructured(t, cls))
	}
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		apiv1.NodePoolGVR: "NodePoolList", apiv1.NodeClaimGVR: "NodeClaimList", apiv1.EC2NodeClassGVR: "EC2NodeClassList",
		v1alpha1.NodeOverlayGVR: "NodeOverlayList",
	}, dyn...)
	kc := kubefake.NewSimpleClientset(w.Objects...)
	cl, err := kube.NewFromClients(kc, dc)
	if err != nil {
		t.Fatal(err)
	}
	if w.Prepare != nil {
		w.Prepare(cl)
	}
	return &Fake{Cluster: cl, Kube: kc, Dynamic: dc}
}

// Start builds the Cluster and syncs its informers until the test ends.
func Start(t testing.TB, w World) *Fake {
	t.Helper()
	f := New(t, w)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Cluster.Start(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return f
}

// Unstructured converts a typed object for the dynamic fake.
func Unstructured(t testing.TB, obj any) *unstructured.Unstructured {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: u}
}
