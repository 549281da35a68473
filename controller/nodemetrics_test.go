package controller

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The karpenter_nodes_total and karpenter_nodes_utilization aliases carry
// joinery_nodes_total's and joinery_nodes_utilization's values and labels.
func TestNodeCollectorServesTheKarpenterAliases(t *testing.T) {
	node := func(name string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "default"}}}
		n.Status.Allocatable = rl("cpu", "2", "memory", "8Gi", "pods", "29")
		return n
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi")}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	unmanaged := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "static"}}
	cl := kubetest.Start(t, kubetest.World{Objects: []runtime.Object{node("a"), node("b"), unmanaged, pod}}).Cluster
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newNodeCollector(cl, aws.NewICECache(time.Minute, time.Now)))
	want := `
# HELP joinery_nodes_total Nodes launched by Joinery, by NodePool.
# TYPE joinery_nodes_total gauge
joinery_nodes_total{nodepool="default"} 2
# HELP karpenter_nodes_total Nodes launched by Joinery, by NodePool (joinery_nodes_total).
# TYPE karpenter_nodes_total gauge
karpenter_nodes_total{nodepool="default"} 2
# HELP joinery_nodes_utilization Requests divided by allocatable on Joinery nodes (0-1).
# TYPE joinery_nodes_utilization gauge
joinery_nodes_utilization{nodepool="default",resource="cpu"} 0.25
joinery_nodes_utilization{nodepool="default",resource="memory"} 0.0625
joinery_nodes_utilization{nodepool="default",resource="pods"} 0.017241379310344827
# HELP karpenter_nodes_utilization Requests divided by allocatable on Joinery nodes (0-1), by NodePool (joinery_nodes_utilization).
# TYPE karpenter_nodes_utilization gauge
karpenter_nodes_utilization{nodepool="default",resource="cpu"} 0.25
karpenter_nodes_utilization{nodepool="default",resource="memory"} 0.0625
karpenter_nodes_utilization{nodepool="default",resource="pods"} 0.017241379310344827
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"joinery_nodes_total", "karpenter_nodes_total", "joinery_nodes_utilization", "karpenter_nodes_utilization"); err != nil {
		t.Error(err)
	}
}
