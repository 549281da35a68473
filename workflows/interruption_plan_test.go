package workflows

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
)

func TestPlanInterruptionDecidesFromTheEventAndTheTarget(t *testing.T) {
	node := InterruptionTarget{NodeClaim: "default-abcde", NodeName: "ip-10-0-0-4.ec2.internal", InstanceType: "m5.large", Zone: "us-east-1a"}
	noNode := node
	noNode.NodeName = ""
	busy := node
	busy.DisruptingFor = "underutilized"
	noZone := node
	reserved := node
	reserved.CapacityReservationID = "cr-0lent"
	noZone.Zone = ""
	spot := InterruptionInput{Kind: saga.KindSpotInterrupted, InstanceID: "i-0123", Action: "terminate"}
	notice := spot
	notice.NoticeEnd = time.Date(2026, 3, 1, 12, 2, 0, 0, time.UTC)
	mark := &saga.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}
	cases := []struct {
		name string
		in   InterruptionInput
		tgt  InterruptionTarget
		want interruptionPlan
	}{
		{"instance of no NodeClaim", spot, InterruptionTarget{}, interruptionPlan{Step: interruptionUnknown,
			Why:  "instance i-0123 belongs to no NodeClaim of this cluster",
			Note: "spot interruption warning (instance-action terminate): instance i-0123 belongs to no NodeClaim of this cluster"}},
		{"spot warning: mark the pool, then drain", notice, node, interruptionPlan{Step: interruptionDrain, MarkUnavailable: mark,
			Note: "spot interruption warning (instance-action terminate): cordon, replace and drain before 2026-03-01T12:02:00Z"}},
		{"spot warning without a zone: nothing to mark", spot, noZone, interruptionPlan{Step: interruptionDrain,
			Note: "spot interruption warning (instance-action terminate): cordon, replace and drain"}},
		{"rebalance recommendation informs only", InterruptionInput{Kind: saga.KindRebalanceRecommendation}, node, interruptionPlan{Step: interruptionInform,
			Note: "rebalance recommendation: no disruption (rebalance recommendations only inform unless --interruption-rebalance-drain is set)"}},
		{"rebalance recommendation with drain on: mark and drain", InterruptionInput{Kind: saga.KindRebalanceRecommendation, DrainOnRebalance: true}, node,
			interruptionPlan{Step: interruptionDrain, MarkUnavailable: mark, Note: "rebalance recommendation: cordon, replace and drain"}},
		{"already being disrupted: marked, then skipped", spot, busy, interruptionPlan{Step: interruptionSkip, MarkUnavailable: mark,
			Why:  "node is already being disrupted (underutilized)",
			Note: "spot interruption warning (instance-action terminate): node is already being disrupted (underutilized)"}},
		{"no Node yet: terminate the NodeClaim", InterruptionInput{Kind: saga.KindInstanceStopped, State: "stopping"}, noNode,
			interruptionPlan{Step: interruptionTerminate, Note: "instance stopping: the instance has no Node yet; terminating its NodeClaim"}},
		{"scheduled change drains without marking", InterruptionInput{Kind: saga.KindScheduledChange}, node,
			interruptionPlan{Step: interruptionDrain, Note: "scheduled maintenance (AWS Health): cordon, replace and drain"}},
		{"reservation interruption: mark the reservation, then drain", InterruptionInput{Kind: saga.KindCapacityReservationInterrupted, Action: "terminate",
			NoticeEnd: notice.NoticeEnd}, reserved, interruptionPlan{Step: interruptionDrain,
			MarkUnavailable: &saga.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "reserved", ReservationID: "cr-0lent"},
			Note:            "capacity reservation interruption warning (instance-action terminate): cordon, replace and drain before 2026-03-01T12:02:00Z"}},
		{"capacity block ending drains by the block's reclaim", InterruptionInput{Kind: saga.KindCapacityBlockExpiring, NoticeEnd: notice.NoticeEnd}, reserved,
			interruptionPlan{Step: interruptionDrain, Note: "capacity block ending: cordon, replace and drain before 2026-03-01T12:02:00Z"}},
		{"unknown kind informs", InterruptionInput{Kind: "something_else"}, node, interruptionPlan{Step: interruptionInform,
			Note: "something_else: no disruption (rebalance recommendations only inform unless --interruption-rebalance-drain is set)"}},
	}
	for _, c := range cases {
		if got := planInterruption(c.in, c.tgt); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// Handling only escalates: each kind is superseded by the kinds asking as
// much or more, never by weaker ones; kinds Joinery does not act on by none.
func TestSupersedingKinds(t *testing.T) {
	for kind, want := range map[string]string{
		saga.KindRebalanceRecommendation:        "scheduled_change capacity_block_expiring spot_interrupted capacity_reservation_interrupted instance_stopped instance_terminated",
		saga.KindScheduledChange:                "capacity_block_expiring spot_interrupted capacity_reservation_interrupted instance_stopped instance_terminated",
		saga.KindCapacityBlockExpiring:          "scheduled_change spot_interrupted capacity_reservation_interrupted instance_stopped instance_terminated",
		saga.KindSpotInterrupted:                "capacity_reservation_interrupted instance_stopped instance_terminated",
		saga.KindCapacityReservationInterrupted: "spot_interrupted instance_stopped instance_terminated",
		saga.KindInstanceStopped:                "instance_terminated",
		saga.KindInstanceTerminated:             "instance_stopped",
		"no_op":                                 "",
	} {
		if got := strings.Join(SupersedingKinds(kind), " "); got != want {
			t.Errorf("SupersedingKinds(%s) = %q, want %q", kind, got, want)
		}
	}
}
