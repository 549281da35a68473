package world

import (
	"context"
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/sim/kubelet"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultSystemNodes is Options.SystemNodes for starter dev, the bench
// and the integration tests: Karpenter's getting-started node group has
// two.
const DefaultSystemNodes = 2

// SystemNodeGroupLabel is the label the system nodes carry (their managed
// node group's name, systemNodeGroup).
const SystemNodeGroupLabel = "eks.amazonaws.com/nodegroup"

const systemNodeGroup = "system"

// addSystemNodes registers n nodes of a managed node group, tainted
// CriticalAddonsOnly so that no workload pod fits them (kwok keeps them
// Ready). A cluster running an autoscaler has such nodes, at least the
// autoscaler's own; without any node the kube-scheduler's failures name no
// plugin, so every Node event sends every pending pod back to be tried,
// which no real cluster sees. A resumed world keeps the ones it has.
func addSystemNodes(ctx context.Context, kc kubernetes.Interface, n int, zone string) error {
	for i := range n {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("system-%d", i),
				Annotations: map[string]string{kubelet.KwokAnnotation: "fake"},
				Labels: map[string]string{SystemNodeGroupLabel: systemNodeGroup, corev1.LabelOSStable: "linux",
					corev1.LabelArchStable: "amd64", apiv1.LabelInstanceType: "m5.large", apiv1.LabelZone: zone}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"),
				corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")}},
		}
		node.Status.Capacity = node.Status.Allocatable
		_, err := kc.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("system node %s: %w", node.Name, err)
		}
	}
	return nil
}

func (w *World) startSystemNodes(ctx context.Context, o Options) error {
	if o.SystemNodes <= 0 {
		return nil
	}
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return err
	}
	return addSystemNodes(ctx, kc, o.SystemNodes, o.Region+"a")
}
