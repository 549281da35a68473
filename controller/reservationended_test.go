package controller

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func reservedClaim(name, instance string) *apiv1.NodeClaim {
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "reserved",
		apiv1.LabelCapacityType: apiv1.CapacityTypeReserved, apiv1.LabelCapacityReservationID: "cr-1", apiv1.LabelCapacityReservationType: "default"}}}
	nc.Status.ProviderID, nc.Status.NodeName = "aws:///us-east-1a/"+instance, "ip-"+name
	return nc
}

// The reserved node whose instance EC2 now runs on demand (its
// reservation ended) is relabelled on-demand, NodeClaim and registered
// Node, the reservation labels gone; the one still in its reservation is
// left alone.
func TestReservationEndRelabelsTheNode(t *testing.T) {
	claims := []*apiv1.NodeClaim{reservedClaim("ended", "i-1"), reservedClaim("held", "i-2")}
	var nodes []runtime.Object
	for _, nc := range claims {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nc.Status.NodeName, Labels: map[string]string{
			apiv1.LabelNodeRegistered: "true", apiv1.LabelCapacityType: "reserved", apiv1.LabelCapacityReservationID: "cr-1", "team": "ml"}}})
	}
	f := kubetest.Start(t, kubetest.World{Claims: claims, Objects: nodes})
	var asked []string
	w := &reservationEndWatcher{cl: f.Cluster, log: zap.NewNop(), instances: func(_ context.Context, ids []string) (map[string]aws.Instance, error) {
		asked = append(asked, ids...)
		return map[string]aws.Instance{
			"i-1": {ID: "i-1", CapacityType: apiv1.CapacityTypeOnDemand},
			"i-2": {ID: "i-2", CapacityType: apiv1.CapacityTypeReserved, CapacityReservationID: "cr-1"},
		}, nil
	}}
	w.check(context.Background())
	if len(asked) != 2 {
		t.Errorf("looked up %v, want both reserved instances", asked)
	}
	ctx := context.Background()
	for name, want := range map[string]string{"ended": "on-demand", "held": "reserved"} {
		nc, err := f.Cluster.NodeClaim(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		_, hasID := nc.Labels[apiv1.LabelCapacityReservationID]
		if nc.Labels[apiv1.LabelCapacityType] != want || hasID != (want == "reserved") {
			t.Errorf("NodeClaim %s labels %v, want capacity type %s", name, nc.Labels, want)
		}
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, "ip-"+name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, hasID = node.Labels[apiv1.LabelCapacityReservationID]
		if node.Labels[apiv1.LabelCapacityType] != want || hasID != (want == "reserved") || node.Labels["team"] != "ml" {
			t.Errorf("Node ip-%s labels %v, want capacity type %s, other labels kept", name, node.Labels, want)
		}
	}
}
