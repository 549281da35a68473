package controller

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A NodeClaim written before NodeClaims carried their class gets the
// karpenter.k8s.aws/ec2nodeclass label, and so does its Node; another
// class's NodeClaim is left alone.
func TestHydrateLabelsTheNodeClass(t *testing.T) {
	claim := func(name, class, node string) *apiv1.NodeClaim {
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "p"}}}
		nc.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: class}
		nc.Status.NodeName = node
		return nc
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"team": "a"}}}
	f := kubetest.Start(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim("old", "default", "n1"), claim("other", "gpu", "")},
		Objects: []runtime.Object{node}})
	r := &nodeClassReconciler{cl: f.Cluster, log: zap.NewNop()}
	testwait.Eventually(t, "claims and node cached", 0, func() bool {
		_, err := f.Cluster.Nodes.Get("n1")
		return len(f.Cluster.NodeClaims()) == 2 && err == nil
	})
	r.hydrate(context.Background(), "default")
	const key = "karpenter.k8s.aws/ec2nodeclass"
	for _, c := range []struct{ name, want string }{{"old", "default"}, {"other", ""}} {
		nc, err := f.Cluster.NodeClaim(context.Background(), c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := nc.Labels[key]; got != c.want {
			t.Errorf("NodeClaim %s: %s=%q, want %q", c.name, key, got, c.want)
		}
	}
	n, err := f.Kube.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels[key] != "default" || n.Labels["team"] != "a" {
		t.Errorf("node labels %v, want %s=default added to team=a", n.Labels, key)
	}
}
