//go:build integration

package integration

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReservationEndedNodesBecomeOnDemand: 3 pods on 3 nodes of a
// reservation of 3 m5.large; the reservation ends (EC2 runs its instances
// on as On-Demand capacity and names no reservation for them): within a
// minute or so every NodeClaim and Node says capacity type on-demand
// without the reservation labels, as Karpenter relabels them, and the
// instances keep running.
func TestReservationEndedNodesBecomeOnDemand(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := startEnvWith(t, false)
	cr, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 3,
		Tags: map[string]string{"joinery.sh/purpose": "reserved-test"}})
	if err != nil {
		t.Fatal(err)
	}
	e.runControllerLogged(t, func(c *controller.Config) { c.NodeClassResync = time.Hour })
	e.applyWithDefaultClass(t, "testdata/reserved.yaml")
	e.apply(t, readManifests(t, "testdata/reserved-app.yaml"))
	waitFor(t, 4*time.Minute, "3 reserved-app pods Ready", func() bool { n, _ := e.readyPods("app=reserved-app"); return n == 3 })
	claims := e.poolClaims(t, "reserved")
	for _, nc := range claims {
		if nc.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeReserved || nc.Labels[apiv1.LabelCapacityReservationID] != cr.ID {
			t.Fatalf("NodeClaim %s labels %v: want reserved in %s", nc.Name, nc.Labels, cr.ID)
		}
	}
	if err := e.w.EC2.EndCapacityReservation(cr.ID); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	waitFor(t, 3*time.Minute, "every node relabelled on-demand", func() bool {
		for _, nc := range claims {
			got, err := dynamicClient(t, e).Resource(apiv1.NodeClaimGVR).Get(e.ctx, nc.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			l := got.GetLabels()
			if _, has := l[apiv1.LabelCapacityReservationID]; l[apiv1.LabelCapacityType] != apiv1.CapacityTypeOnDemand || has {
				return false
			}
			node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
			if err != nil {
				return false
			}
			if _, has := node.Labels[apiv1.LabelCapacityReservationID]; node.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeOnDemand || has {
				return false
			}
		}
		return true
	})
	for _, nc := range claims {
		id := instanceOfClaim(nc)
		if in, ok := e.w.EC2.Instance(id); !ok || in.State != ec2.StateRunning {
			t.Errorf("instance %s of %s: %+v, want still running", id, nc.Name, in)
		}
	}
	t.Logf("%d nodes relabelled on-demand %s after their reservation ended; test %s", len(claims),
		time.Since(ended).Round(time.Second), time.Since(start).Round(time.Second))
}
