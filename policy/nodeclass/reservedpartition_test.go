package nodeclass

import (
	"reflect"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func classWith(rs ...apiv1.CapacityReservationStatus) *apiv1.EC2NodeClass {
	cls := &apiv1.EC2NodeClass{}
	cls.Name = "gpu"
	cls.Status.CapacityReservations = rs
	return cls
}

// A reserved launch keeps one kind of reservation, as Karpenter's
// capacity-reservation-type filter does: the kind of the cheapest
// offering, ties going default, then capacity block, then interruptible;
// of a capacity block only the cheapest offering is kept (CreateFleet
// takes one block per request).
func TestReservedLaunchOfferings(t *testing.T) {
	cls := classWith(
		apiv1.CapacityReservationStatus{ID: "cr-odcr", ReservationType: "default"},
		apiv1.CapacityReservationStatus{ID: "cr-block1", ReservationType: "capacity-block"},
		apiv1.CapacityReservationStatus{ID: "cr-block2", ReservationType: "capacity-block"},
		apiv1.CapacityReservationStatus{ID: "cr-lent", ReservationType: "default", Interruptible: true},
	)
	off := func(id string, price float64) saga.Offering {
		return saga.Offering{InstanceType: "p5.48xlarge", Zone: "us-east-1a", CapacityType: "reserved", Price: price, ReservationID: id}
	}
	for _, c := range []struct {
		name string
		in   []saga.Offering
		want []saga.Offering
		kind ReservationKind
	}{
		{"the cheapest kind wins", []saga.Offering{off("cr-odcr", 3), off("cr-block1", 2), off("cr-lent", 1)},
			[]saga.Offering{off("cr-lent", 1)}, ReservationKind{Type: "default", Interruptible: true}},
		{"ties: default first", []saga.Offering{off("cr-block1", 1), off("cr-lent", 1), off("cr-odcr", 1)},
			[]saga.Offering{off("cr-odcr", 1)}, ReservationKind{Type: "default"}},
		{"ties without default: capacity block", []saga.Offering{off("cr-lent", 1), off("cr-block1", 1)},
			[]saga.Offering{off("cr-block1", 1)}, ReservationKind{Type: "capacity-block"}},
		{"one block offering, the cheapest", []saga.Offering{off("cr-block1", 2), off("cr-block2", 1), off("cr-gone", 5)},
			[]saga.Offering{off("cr-block2", 1), off("cr-gone", 5)}, ReservationKind{Type: "capacity-block"}},
	} {
		got, kind := ReservedLaunchOfferings(cls, c.in)
		if !reflect.DeepEqual(got, c.want) || kind != c.kind {
			t.Errorf("%s: got %v %+v, want %v %+v", c.name, got, kind, c.want, c.kind)
		}
	}
}

// Nodes of a capacity block within its expiration period of its end are
// drained by the block's reclaim (30 min before its end); others not.
func TestExpiringBlockNodes(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	soon, later := metav1.NewTime(now.Add(35*time.Minute)), metav1.NewTime(now.Add(3*time.Hour))
	cls := classWith(
		apiv1.CapacityReservationStatus{ID: "cr-soon", ReservationType: "capacity-block", EndTime: &soon},
		apiv1.CapacityReservationStatus{ID: "cr-later", ReservationType: "capacity-block", EndTime: &later},
		apiv1.CapacityReservationStatus{ID: "cr-odcr", ReservationType: "default", EndTime: &soon},
	)
	claim := func(name, id string) *apiv1.NodeClaim {
		nc := &apiv1.NodeClaim{}
		nc.Name, nc.Labels = name, map[string]string{apiv1.LabelCapacityReservationID: id}
		nc.Spec.NodeClassRef = &apiv1.NodeClassReference{Name: "gpu"}
		nc.Status.ProviderID = "aws:///us-east-1a/i-0" + name
		return nc
	}
	gone := claim("c", "cr-soon")
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	claims := []*apiv1.NodeClaim{claim("b", "cr-soon"), claim("a", "cr-soon"), claim("d", "cr-later"), claim("e", "cr-odcr"), gone, claim("f", "")}
	classOf := func(string) *apiv1.EC2NodeClass { return cls }
	got := ExpiringBlockNodes(claims, classOf, now, 0)
	deadline := soon.Add(-30 * time.Minute)
	want := []ExpiringBlockNode{{NodeClaim: "a", InstanceID: "i-0a", ReservationID: "cr-soon", Deadline: deadline},
		{NodeClaim: "b", InstanceID: "i-0b", ReservationID: "cr-soon", Deadline: deadline}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := ExpiringBlockNodes(claims, classOf, now, 30*time.Minute); len(got) != 0 {
		t.Errorf("a 30 min period: %+v", got)
	}
}
