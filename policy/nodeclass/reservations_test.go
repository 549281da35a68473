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
	past, future, soon := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now.Add(time.Hour)), metav1.NewTime(now.Add(39*time.Minute))
	in := []apiv1.CapacityReservationStatus{
		{ID: "cr-b", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", InstanceMatchCriteria: "targeted", ReservationType: "default", EndTime: &future},
		{ID: "cr-a", InstanceType: "c5.large", AvailabilityZone: "us-east-1b", InstanceMatchCriteria: "open"},
		{ID: "cr-b", InstanceType: "m5.large", AvailabilityZone: "us-east-1a", InstanceMatchCriteria: "targeted"},
		{ID: "cr-c", InstanceMatchCriteria: "open", EndTime: &past},
		{ID: "cr-d", InstanceMatchCriteria: "targeted", ReservationType: "capacity-block", EndTime: &future},
		{ID: "cr-e", InstanceMatchCriteria: "something-new"},
		{ID: "cr-f", InstanceMatchCriteria: "open", Interruptible: true},
		{ID: "cr-g", InstanceMatchCriteria: "targeted", ReservationType: "capacity-block", EndTime: &soon},
		{ID: "cr-h", InstanceMatchCriteria: "targeted", ReservationType: "capacity-block", Interruptible: true},
		{ID: "cr-i", InstanceMatchCriteria: "open", ReservationType: "something-new"},
	}
	out, skipped := SelectReservations(in, now, 0)
	got := map[string]string{}
	for _, r := range out {
		got[r.ID] = r.ReservationType + "/" + r.State
	}
	// A block 39 minutes from its end is expiring (Karpenter's 40 min);
	// one an hour from it is active; an interruptible ODCR is selected.
	wantSel := map[string]string{"cr-a": "default/active", "cr-b": "default/active", "cr-d": "capacity-block/active",
		"cr-f": "default/active", "cr-g": "capacity-block/expiring"}
	if len(out) != len(wantSel) || out[0].ID != "cr-a" || !out[3].Interruptible || out[1].EndTime != &future {
		t.Errorf("selected %+v", out)
	}
	for id, w := range wantSel {
		if got[id] != w {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
	want := []string{"cr-c: ended 2026-12-01T11:59:00Z", `cr-e: instance match criteria "something-new" is not open or targeted`,
		"cr-h: an interruptible capacity block is not a reservation type EC2 has",
		`cr-i: reservation type "something-new" is not default or capacity-block`}
	if strings.Join(skipped, "|") != strings.Join(want, "|") {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	// A shortened period (tests) moves the expiring point.
	if out, _ := SelectReservations(in[6:7], now, 30*time.Minute); out[0].State != "active" {
		t.Errorf("30 min period: %+v", out)
	}
	st := Status(nil, Resolution{CapacityReservations: out}, 1, metav1.NewTime(now))
	c := apiv1.FindCondition(st.Conditions, apiv1.ConditionCapacityReservationsReady)
	if c == nil || c.Status != metav1.ConditionTrue || len(st.CapacityReservations) != 5 {
		t.Errorf("status %+v", st)
	}
}
