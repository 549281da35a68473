package main

import (
	"context"
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/sim/kubelet"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// systemNodes is how many nodes of a managed node group the cluster has
// before the burst, as every EKS cluster running an autoscaler does (it
// runs there; Karpenter's getting-started group has two): tainted
// CriticalAddonsOnly, so the burst's pods do not fit them. Without any
// node the kube-scheduler's failures name no plugin, and it retries every
// pending pod every 10 s (its backoff) until the first node comes: with
// 5,000 pods, 500 hopeless attempts a second that no real cluster sees.
var systemNodes = 2

// addSystemNodes registers the system nodes (kwok keeps them Ready).
func addSystemNodes(ctx context.Context, kc kubernetes.Interface, n int) error {
	for i := range n {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("system-%d", i),
				Annotations: map[string]string{kubelet.KwokAnnotation: "fake"},
				Labels: map[string]string{"eks.amazonaws.com/nodegroup": "system", corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
					apiv1.LabelInstanceType: "m5.large", apiv1.LabelZone: "us-east-1a"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"),
				corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")}},
		}
		node.Status.Capacity = node.Status.Allocatable
		if _, err := kc.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("system node %s: %w", node.Name, err)
		}
	}
	return nil
}
