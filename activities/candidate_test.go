package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// newFakeActivities wires Activities over client-go fakes holding objs.
func newFakeActivities(t *testing.T, claims []*apiv1.NodeClaim, objs ...runtime.Object) *Activities {
	t.Helper()
	return newFakeActivitiesWithPools(t, nil, claims, objs...)
}

// newFakeActivitiesWithPools is newFakeActivities with NodePools too.
func newFakeActivitiesWithPools(t *testing.T, pools []*apiv1.NodePool, claims []*apiv1.NodeClaim, objs ...runtime.Object) *Activities {
	t.Helper()
	return newFakeActivitiesWith(t, pools, claims, nil, objs...)
}

// newFakeActivitiesWith is newFakeActivities with NodePools and EC2NodeClasses too.
func newFakeActivitiesWith(t *testing.T, pools []*apiv1.NodePool, claims []*apiv1.NodeClaim, classes []*apiv1.EC2NodeClass, objs ...runtime.Object) *Activities {
	t.Helper()
	return newFakeActivitiesPrepared(t, nil, pools, claims, classes, objs...)
}

// newFakeActivitiesPrepared is newFakeActivitiesWith calling prepare (if
// not nil) on the Cluster before its informers start.
func newFakeActivitiesPrepared(t *testing.T, prepare func(*kube.Cluster), pools []*apiv1.NodePool, claims []*apiv1.NodeClaim, classes []*apiv1.EC2NodeClass, objs ...runtime.Object) *Activities {
	t.Helper()
	kc := kubefake.NewSimpleClientset(objs...)
	var dyn []runtime.Object
	add := func(obj interface{}) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		dyn = append(dyn, &unstructured.Unstructured{Object: u})
	}
	for _, np := range pools {
		np.APIVersion, np.Kind = "karpenter.sh/v1", "NodePool"
		add(np)
	}
	for _, nc := range claims {
		nc.APIVersion, nc.Kind = "karpenter.sh/v1", "NodeClaim"
		add(nc)
	}
	for _, cls := range classes {
		cls.APIVersion, cls.Kind = "karpenter.k8s.aws/v1", "EC2NodeClass"
		add(cls)
	}
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		apiv1.NodePoolGVR: "NodePoolList", apiv1.NodeClaimGVR: "NodeClaimList", apiv1.EC2NodeClassGVR: "EC2NodeClassList",
		v1alpha1.NodeOverlayGVR: "NodeOverlayList",
	}, dyn...)
	cl, err := kube.NewFromClients(kc, dc)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(cl)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := cl.Start(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return &Activities{Cluster: cl, Catalog: catalog.MustDefault(), Log: zap.NewNop()}
}

func testNode() (*corev1.Node, *apiv1.NodeClaim) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-4.ec2.internal", Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0123"}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-abcde", Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
		Status: apiv1.NodeClaimStatus{NodeName: node.Name, ProviderID: node.Spec.ProviderID}}
	return node, nc
}

func pod(name string, owned bool, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: "ip-10-0-0-4.ec2.internal"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owned {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u1", Controller: &yes}}
	}
	return p
}

func TestCheckDisruptionCandidate(t *testing.T) {
	cases := []struct {
		name   string
		pods   []*corev1.Pod
		in     workflows.DisruptInput
		ok     bool
		reason string // substring of Why
	}{
		{"owned pods, consolidation", []*corev1.Pod{pod("a", true, nil)}, workflows.DisruptInput{Reason: workflows.ReasonUnderused, SkipBudgets: true}, true, ""},
		{"bare pod, consolidation", []*corev1.Pod{pod("a", true, nil), pod("trainer", false, nil)},
			workflows.DisruptInput{Reason: workflows.ReasonUnderused, SkipBudgets: true}, false, "default/trainer has no controller"},
		{"bare pod, operator drain", []*corev1.Pod{pod("trainer", false, nil)}, workflows.DisruptInput{Reason: workflows.ReasonManual, SkipBudgets: true}, true, ""},
		{"do-not-disrupt pod", []*corev1.Pod{pod("a", true, map[string]string{apiv1.AnnotationDoNotDisrupt: "true"})},
			workflows.DisruptInput{Reason: workflows.ReasonManual, SkipBudgets: true}, false, "karpenter.sh/do-not-disrupt"},
		{"do-not-disrupt pod, interruption", []*corev1.Pod{pod("a", true, map[string]string{apiv1.AnnotationDoNotDisrupt: "true"})},
			workflows.DisruptInput{Reason: workflows.ReasonInterruption, Interruption: true}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, nc := testNode()
			objs := []runtime.Object{node}
			for _, p := range c.pods {
				objs = append(objs, p)
			}
			a := newFakeActivities(t, []*apiv1.NodeClaim{nc}, objs...)
			c.in.NodeName = node.Name
			got, err := a.CheckDisruptionCandidate(context.Background(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.OK != c.ok || !strings.Contains(got.Why, c.reason) {
				t.Fatalf("got %+v, want ok=%v why~%q", got, c.ok, c.reason)
			}
			if got.OK && (got.NodeClaim != nc.Name || got.InstanceID != "i-0123") {
				t.Fatalf("candidate %+v", got)
			}
		})
	}
}

func TestCheckDisruptionCandidateMissingNodeOrClaim(t *testing.T) {
	node, _ := testNode()
	a := newFakeActivities(t, nil, node)
	got, _ := a.CheckDisruptionCandidate(context.Background(), workflows.DisruptInput{NodeName: node.Name, Reason: workflows.ReasonManual})
	if got.OK || !strings.Contains(got.Why, "has no NodeClaim") {
		t.Fatalf("got %+v", got)
	}
	got, _ = a.CheckDisruptionCandidate(context.Background(), workflows.DisruptInput{NodeName: "nope", Reason: workflows.ReasonManual})
	if got.OK || !strings.Contains(got.Why, "does not exist") {
		t.Fatalf("got %+v", got)
	}
}
