package catalog

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "github.com/joinery/joinery/api/v1"
)

func TestReservedOfferings(t *testing.T) {
	cat := MustDefault()
	m5, _ := cat.Get("m5.large") // on-demand 0.096
	three, none := int32(3), int32(0)
	rs := []apiv1.CapacityReservationStatus{
		{ID: "cr-a", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", State: "active", AvailableInstanceCount: &three},
		{ID: "cr-b", InstanceType: "m5.large", AvailabilityZone: "us-east-1b", AvailableInstanceCount: &none},
		{ID: "cr-c", InstanceType: "c5.large", AvailabilityZone: "us-east-1a", AvailableInstanceCount: &three},
		{ID: "cr-d", InstanceType: "m5.large", AvailabilityZone: "us-east-1c", AvailableInstanceCount: &three},
		{ID: "cr-e", InstanceType: "m5.large", AvailabilityZone: "us-east-1a"}, // no count (copied from Karpenter)
	}
	m := NewMarket()
	got := m.ReservedOfferings(m5, rs, []string{"us-east-1a", "us-east-1b"})
	price := 0.096 / 10_000_000
	want := []Offering{
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: true, ReservationID: "cr-a", ReservationType: "default"},
		{Zone: "us-east-1b", CapacityType: "reserved", Price: price, Available: false, ReservationID: "cr-b", ReservationType: "default"},
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: false, ReservationID: "cr-e", ReservationType: "default"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reserved offerings\n got %+v\nwant %+v", got, want)
	}
	if p := m.Price(m5, "us-east-1a", "reserved"); p != price {
		t.Errorf("reserved price %g, want %g", p, price)
	}

	// Launches count down from the status count; a new count from EC2
	// replaces what is left; a refusal for capacity leaves nothing.
	for i := 0; i < 3; i++ {
		m.ReservationLaunched("cr-a")
	}
	if n := m.ReservationAvailable(rs[0]); n != 0 {
		t.Errorf("after 3 launches: %d left, want 0", n)
	}
	if o := m.ReservedOfferings(m5, rs[:1], []string{"us-east-1a"}); o[0].Available {
		t.Error("a used-up reservation's offering is available")
	}
	two := int32(2)
	fresh := rs[0]
	fresh.AvailableInstanceCount = &two
	if n := m.ReservationAvailable(fresh); n != 2 {
		t.Errorf("after EC2 said 2: %d left, want 2", n)
	}
	m.ReservationUsedUp("cr-a")
	if n := m.ReservationAvailable(fresh); n != 0 {
		t.Errorf("after ReservationCapacityExceeded: %d left, want 0", n)
	}
	var nilMarket *Market
	if n := nilMarket.ReservationAvailable(rs[0]); n != 3 {
		t.Errorf("nil market: %d, want the status count 3", n)
	}
}

// Capacity blocks and interruptible reservations are priced as Karpenter
// prices every reservation (on-demand / 10,000,000) and carry their kind;
// a block within its expiration period of its end is not available, by
// its end time even before the status says expiring.
func TestReservedOfferingsOfBlocks(t *testing.T) {
	m5, _ := MustDefault().Get("m5.large")
	three := int32(3)
	now := time.Now()
	far, near := metav1.NewTime(now.Add(2*time.Hour)), metav1.NewTime(now.Add(10*time.Minute))
	rs := []apiv1.CapacityReservationStatus{
		{ID: "cr-block", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", ReservationType: "capacity-block", EndTime: &far, AvailableInstanceCount: &three},
		{ID: "cr-ending", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", ReservationType: "capacity-block", EndTime: &near, AvailableInstanceCount: &three},
		{ID: "cr-lent", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", ReservationType: "default", Interruptible: true, AvailableInstanceCount: &three},
		{ID: "cr-expiring", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", ReservationType: "capacity-block", State: "expiring", EndTime: &far, AvailableInstanceCount: &three},
	}
	m := NewMarket()
	got := m.ReservedOfferings(m5, rs, []string{"us-east-1a"})
	price := 0.096 / 10_000_000
	want := []Offering{
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: true, ReservationID: "cr-block", ReservationType: "capacity-block"},
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: false, ReservationID: "cr-ending", ReservationType: "capacity-block"},
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: true, ReservationID: "cr-lent", ReservationType: "default", ReservationInterruptible: true},
		{Zone: "us-east-1a", CapacityType: "reserved", Price: price, Available: false, ReservationID: "cr-expiring", ReservationType: "capacity-block"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reserved offerings\n got %+v\nwant %+v", got, want)
	}
	// A shortened expiration period (tests) keeps the near block open.
	m.SetCapacityBlockExpiration(5 * time.Minute)
	if o := m.ReservedOfferings(m5, rs[1:2], []string{"us-east-1a"}); !o[0].Available {
		t.Error("a block 10 min from its end with a 5 min period is not available")
	}
}
