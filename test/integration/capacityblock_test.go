//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reservedNode is the capblock pool's one launched NodeClaim once its pod
// is Ready on it; it checks the reserved labels of the NodeClaim and its
// Node (karpenter.k8s.aws/capacity-reservation-id, -type and
// -interruptible, as Karpenter sets them) and that the instance was
// launched from a template of the market type.
func (e *env) reservedNode(t *testing.T, cr ec2.CapacityReservation, typ, interruptible, market string) *apiv1.NodeClaim {
	t.Helper()
	waitFor(t, 3*time.Minute, "the capblock-app pod Ready", func() bool { n, _ := e.readyPods("app=capblock-app"); return n == 1 })
	claims := e.poolClaims(t, "capblock")
	if len(claims) != 1 {
		t.Fatalf("%d NodeClaims, want 1", len(claims))
	}
	nc := claims[0]
	want := map[string]string{apiv1.LabelCapacityType: apiv1.CapacityTypeReserved, apiv1.LabelCapacityReservationID: cr.ID,
		apiv1.LabelCapacityReservationType: typ, apiv1.LabelCapacityReservationInterruptible: interruptible}
	node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if nc.Labels[k] != v || node.Labels[k] != v {
			t.Errorf("label %s: NodeClaim %q, Node %q, want %q", k, nc.Labels[k], node.Labels[k], v)
		}
	}
	in, _ := e.w.EC2.Instance(instanceOfClaim(nc))
	lt, _ := e.w.EC2.LaunchTemplate(in.LaunchTemplateName)
	t.Logf("NodeClaim %s: instance %s (%s), lifecycle %s, template %s MarketType %s, reservation %s", nc.Name, in.ID, in.InstanceType,
		in.Lifecycle, lt.Name, lt.Data.MarketType, lt.Data.CapacityReservationID)
	if in.Lifecycle != market || in.MarketType != market || lt.Data.MarketType != market || lt.Data.CapacityReservationID != cr.ID {
		t.Errorf("instance %s: lifecycle %q, market type %q, template market type %q targeting %q; want %q into %s",
			in.ID, in.Lifecycle, in.MarketType, lt.Data.MarketType, lt.Data.CapacityReservationID, market, cr.ID)
	}
	return nc
}

func instanceOfClaim(nc *apiv1.NodeClaim) string {
	return nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
}

// replacedBeforeReclaim waits until the pod runs on another node than
// old's and old's instance is terminated, and checks Joinery terminated
// it (TerminateInstances: EC2's own reclaim sets no TerminateTime) and
// that the replacement is on-demand, outside the reservation.
func (e *env) replacedBeforeReclaim(t *testing.T, old *apiv1.NodeClaim, within time.Duration) {
	t.Helper()
	id := instanceOfClaim(old)
	waitFor(t, within, "the pod on a new node and the old instance terminated", func() bool {
		n, byNode := e.readyPods("app=capblock-app")
		in, _ := e.w.EC2.Instance(id)
		return n == 1 && byNode[old.Status.NodeName] == 0 && in.State == ec2.StateTerminated
	})
	in, _ := e.w.EC2.Instance(id)
	if in.TerminateTime.IsZero() {
		t.Errorf("instance %s was reclaimed by EC2, not terminated by Joinery", id)
	}
	claims := e.poolClaims(t, "capblock")
	if len(claims) != 1 || claims[0].Name == old.Name {
		t.Fatalf("NodeClaims after the replacement: %d", len(claims))
	}
	repl := claims[0]
	t.Logf("replacement %s: %s, reservation %q; old instance terminated by Joinery at %s", repl.Name, repl.Labels[apiv1.LabelCapacityType],
		repl.Labels[apiv1.LabelCapacityReservationID], in.TerminateTime.UTC().Format(time.RFC3339))
	if repl.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeOnDemand || repl.Labels[apiv1.LabelCapacityReservationID] != "" {
		t.Errorf("replacement %s: capacity type %s, reservation %q; want on-demand outside the reservation", repl.Name,
			repl.Labels[apiv1.LabelCapacityType], repl.Labels[apiv1.LabelCapacityReservationID])
	}
}

// A capacity block whose EC2 reclaim (30 min before its end) is 6 minutes
// away, with Karpenter's 40-minute expiration period shortened to 32: the
// pod lands on a capacity-block node (labels, MarketType capacity-block
// template, capacity-block instance); 4 minutes in, the block is
// expiring and its node is cordoned, replaced (on-demand: the block takes
// no more launches) and drained, and Joinery terminates it before EC2
// reclaims it.
func TestCapacityBlockNodeIsDrainedBeforeTheBlockEnds(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	now := time.Now()
	cr, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: ec2.ReservationTypeCapacityBlock, InstanceMatchCriteria: "targeted", StartDate: now.Add(-time.Minute),
		EndDate: now.Add(ec2.CapacityBlockReclaim + 3*time.Minute + 30*time.Second), Tags: map[string]string{"joinery.sh/purpose": "capacityblock-test"}})
	if err != nil {
		t.Fatal(err)
	}
	e.runControllerLogged(t, func(c *controller.Config) {
		c.CapacityBlockExpiration = ec2.CapacityBlockReclaim + 2*time.Minute
		c.NodeClassResync = 15 * time.Second
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
	})
	e.applyWithDefaultClass(t, "testdata/capacityblock.yaml")
	old := e.reservedNode(t, cr, apiv1.CapacityReservationTypeCapacityBlock, "false", ec2.LifecycleCapacityBlock)
	expiring := cr.EndDate.Add(-ec2.CapacityBlockReclaim - 2*time.Minute)
	t.Logf("block %s: expiring at %s, EC2 reclaims at %s", cr.ID, expiring.UTC().Format(time.RFC3339),
		cr.EndDate.Add(-ec2.CapacityBlockReclaim).UTC().Format(time.RFC3339))
	e.replacedBeforeReclaim(t, old, 8*time.Minute)
	dc := dynamicClient(t, e)
	if rs := getNodeClass(t, e, dc, "capblock").Status.CapacityReservations; len(rs) != 1 || rs[0].State != apiv1.CapacityReservationStateExpiring {
		t.Errorf("status.capacityReservations %+v, want the block expiring", rs)
	}
	e.expectInterruptionEvent(t, old.Name, "CapacityBlockExpiring")
}

// An interruptible reservation's node: labelled interruptible "true",
// launched as reserved-capacity from a template of MarketType
// interruptible-capacity-reservation. Its owner takes it back: the
// "EC2 Capacity Reservation Instance Interruption Warning" reaches the
// queue, Joinery marks the reservation used up, cordons, replaces (on
// demand) and drains the node, and terminates it within the two minutes.
func TestInterruptibleReservationNodeIsReplacedOnItsWarning(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	cr, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		Interruptible: true, Tags: map[string]string{"joinery.sh/purpose": "capacityblock-test"}})
	if err != nil {
		t.Fatal(err)
	}
	e.runControllerLogged(t, func(c *controller.Config) {
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
	})
	e.applyWithDefaultClass(t, "testdata/capacityblock.yaml")
	old := e.reservedNode(t, cr, apiv1.CapacityReservationTypeDefault, "true", ec2.LifecycleInterruptible)
	res, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: old.Status.NodeName, Kind: world.SimReservation, Notice: world.DefaultNotice})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reservation interruption warning for %s at %s, reclaim at %s: %s", res.InstanceID, res.SentAt.UTC().Format(time.RFC3339),
		res.ReclaimAt.UTC().Format(time.RFC3339), res.Body)
	e.replacedBeforeReclaim(t, old, 3*time.Minute)
	e.expectInterruptionEvent(t, old.Name, "CapacityReservationInstanceInterrupted")
}

// expectInterruptionEvent checks the NodeClaim got an Event of the reason.
func (e *env) expectInterruptionEvent(t *testing.T, claim, reason string) {
	t.Helper()
	waitFor(t, 30*time.Second, "a "+reason+" Event on NodeClaim "+claim, func() bool {
		evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + claim})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason && ev.Type == corev1.EventTypeWarning {
				t.Logf("Event %s: %s", ev.Reason, ev.Message)
				return true
			}
		}
		return false
	})
}
