package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// newFake builds the activities over a kubetest Cluster holding w, each
// opt changing the Deps first.
func newFake(t *testing.T, w kubetest.World, opts ...func(*Deps)) *Activities {
	t.Helper()
	d := Deps{Cluster: kubetest.Start(t, w).Cluster, Catalog: catalog.MustDefault(), Log: zap.NewNop()}
	for _, opt := range opts {
		opt(&d)
	}
	return New(d)
}

// cluster is the Cluster the activities were built over.
func (a *Activities) cluster() *kube.Cluster { return a.Provisioning.cluster }

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
		{"owned pods, consolidation", []*corev1.Pod{pod("a", true, nil)}, workflows.DisruptInput{Reason: saga.ReasonUnderused, SkipBudgets: true}, true, ""},
		{"bare pod, consolidation", []*corev1.Pod{pod("a", true, nil), pod("trainer", false, nil)},
			workflows.DisruptInput{Reason: saga.ReasonUnderused, SkipBudgets: true}, false, "default/trainer has no controller"},
		{"bare pod, operator drain", []*corev1.Pod{pod("trainer", false, nil)}, workflows.DisruptInput{Reason: saga.ReasonManual, SkipBudgets: true}, true, ""},
		{"do-not-disrupt pod", []*corev1.Pod{pod("a", true, map[string]string{apiv1.AnnotationDoNotDisrupt: "true"})},
			workflows.DisruptInput{Reason: saga.ReasonManual, SkipBudgets: true}, false, "karpenter.sh/do-not-disrupt"},
		{"do-not-disrupt pod, interruption", []*corev1.Pod{pod("a", true, map[string]string{apiv1.AnnotationDoNotDisrupt: "true"})},
			workflows.DisruptInput{Reason: saga.ReasonInterruption, Interruption: true}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, nc := testNode()
			objs := []runtime.Object{node}
			for _, p := range c.pods {
				objs = append(objs, p)
			}
			a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{nc}, Objects: objs})
			c.in.NodeName = node.Name
			got, err := a.Disruption.CheckDisruptionCandidate(context.Background(), c.in)
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
	a := newFake(t, kubetest.World{Objects: []runtime.Object{node}})
	got, _ := a.Disruption.CheckDisruptionCandidate(context.Background(), workflows.DisruptInput{NodeName: node.Name, Reason: saga.ReasonManual})
	if got.OK || !strings.Contains(got.Why, "has no NodeClaim") {
		t.Fatalf("got %+v", got)
	}
	got, _ = a.Disruption.CheckDisruptionCandidate(context.Background(), workflows.DisruptInput{NodeName: "nope", Reason: saga.ReasonManual})
	if got.OK || !strings.Contains(got.Why, "does not exist") {
		t.Fatalf("got %+v", got)
	}
}
