package nodeclass

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Invalid reservation terms are named, field and reason, and keep the
// class from launching; valid ones are honoured (not listed).
func TestInvalidCapacityReservationTermsAreNamed(t *testing.T) {
	spec := apiv1.EC2NodeClassSpec{CapacityReservationSelectorTerms: []apiv1.CapacityReservationSelectorTerm{
		{ID: "cr-0123456789abcdef0"},
		{Tags: map[string]string{"team": "ml"}, OwnerID: "012345678901", InstanceMatchCriteria: "targeted"},
		{ID: "r-12"},
		{ID: "cr-1", OwnerID: "012345678901"},
		{OwnerID: "12345"},
		{InstanceMatchCriteria: "any"},
		{Tags: map[string]string{"team": ""}},
	}}
	got := Unsupported(&spec)
	want := []string{
		`spec.capacityReservationSelectorTerms[2].id: Invalid value: "r-12": must match ^cr-[0-9a-z]+$`,
		`spec.capacityReservationSelectorTerms[3].id: Invalid value: "cr-1": 'id' is mutually exclusive`,
		`spec.capacityReservationSelectorTerms[4]: Required value: expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']`,
		`spec.capacityReservationSelectorTerms[4].ownerID: Invalid value: "12345": must match ^[0-9]{12}$`,
		`spec.capacityReservationSelectorTerms[5].instanceMatchCriteria: Unsupported value: "any": supported values: "open", "targeted"`,
		`spec.capacityReservationSelectorTerms[6].tags[team]: Invalid value: "": empty tag keys or values aren't supported`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("entry %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
	if u := Unsupported(&apiv1.EC2NodeClassSpec{CapacityReservationSelectorTerms: spec.CapacityReservationSelectorTerms[:2]}); u != nil {
		t.Errorf("valid terms refused: %q", u)
	}
}

func TestSelectReservations(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	past, future := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now.Add(time.Hour))
	in := []apiv1.CapacityReservationStatus{
		{ID: "cr-b", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", InstanceMatchCriteria: "targeted", ReservationType: "default", EndTime: &future},
		{ID: "cr-a", InstanceType: "c5.large", AvailabilityZone: "us-east-1b", InstanceMatchCriteria: "open"},
		{ID: "cr-b", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", InstanceMatchCriteria: "targeted"},
		{ID: "cr-c", InstanceMatchCriteria: "open", EndTime: &past},
		{ID: "cr-d", InstanceMatchCriteria: "open", ReservationType: "capacity-block"},
		{ID: "cr-e", InstanceMatchCriteria: "something-new"},
		{ID: "cr-f", InstanceMatchCriteria: "open", Interruptible: true},
	}
	out, skipped := SelectReservations(in, now)
	if len(out) != 2 || out[0].ID != "cr-a" || out[1].ID != "cr-b" || out[0].State != "active" || out[1].EndTime != &future {
		t.Errorf("selected %+v", out)
	}
	want := []string{"cr-c: ended 2026-12-01T11:59:00Z", "cr-d: capacity-block reservations are not supported",
		`cr-e: instance match criteria "something-new" is not open or targeted`, "cr-f: interruptible reservations are not supported"}
	if strings.Join(skipped, "|") != strings.Join(want, "|") {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	st := Status(nil, Resolution{CapacityReservations: out}, 1, metav1.NewTime(now))
	c := apiv1.FindCondition(st.Conditions, apiv1.ConditionCapacityReservationsReady)
	if c == nil || c.Status != metav1.ConditionTrue || len(st.CapacityReservations) != 2 {
		t.Errorf("status %+v", st)
	}
}
