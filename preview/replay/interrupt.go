package replay

import (
	"context"
	"fmt"
	"sort"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SpotInterrupter is a replay's Runner.Interrupt: a spot interruption the
// recording shows is inflicted on a spot node of the replay's, of the
// same instance type when there is one, by Simulate (the local world's
// interruption queue, as `starter simulate interruption`, with EC2's
// two-minute notice).
type SpotInterrupter struct {
	Kube     kubernetes.Interface
	Simulate func(ctx context.Context, node string) error
}

// Interrupt picks the replay's node for the recorded one and interrupts it.
func (s SpotInterrupter) Interrupt(ctx context.Context, recorded RecordedNode) error {
	nodes, err := s.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelCapacityType + "=spot"})
	if err != nil {
		return err
	}
	n := spotVictim(nodes.Items, recorded.InstanceType)
	if n == "" {
		return fmt.Errorf("the replay has no spot node")
	}
	return s.Simulate(ctx, n)
}

// spotVictim is the first by name of the nodes not already going away,
// of instanceType when one is; "" for none.
func spotVictim(nodes []corev1.Node, instanceType string) string {
	nodes = append([]corev1.Node(nil), nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	other := ""
	for _, n := range nodes {
		if n.DeletionTimestamp != nil || disrupted(n) {
			continue
		}
		if n.Labels[apiv1.LabelInstanceType] == instanceType {
			return n.Name
		}
		if other == "" {
			other = n.Name
		}
	}
	return other
}

func disrupted(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == apiv1.TaintKeyDisrupted {
			return true
		}
	}
	return false
}
