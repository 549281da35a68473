package main

import (
	"context"
	"fmt"
	"sort"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/preview/replay"
	"github.com/joinery/joinery/sim/world"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// replayInterrupter is the replay's Runner.Interrupt: a spot interruption
// the recording shows is inflicted on a spot node of the replay's, of the
// same instance type when there is one, through the local world's
// interruption queue (as `starter simulate interruption`), with EC2's
// two-minute notice.
func replayInterrupter(w *world.World, kc kubernetes.Interface) func(context.Context, replay.RecordedNode) error {
	return func(ctx context.Context, recorded replay.RecordedNode) error {
		nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelCapacityType + "=spot"})
		if err != nil {
			return err
		}
		n := spotVictim(nodes.Items, recorded.InstanceType)
		if n == "" {
			return fmt.Errorf("the replay has no spot node")
		}
		_, err = w.SimulateInterruption(ctx, world.SimulateRequest{Node: n, Kind: world.SimSpot})
		return err
	}
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
