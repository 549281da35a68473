package disruption

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Field case 3: nodes "0" on weekdays 09:00 UTC for 8h blocks Underutilized
// decisions inside the window and allows them outside it.
func TestScheduledBudgetBlocksInsideItsWindowOnly(t *testing.T) {
	sched := "0 9 * * 1-5"
	budgets := []apiv1.Budget{
		{Nodes: "0", Reasons: []string{BudgetReasonUnderutilized}, Schedule: &sched, Duration: &metav1.Duration{Duration: 8 * time.Hour}},
		{Nodes: "10%"},
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		now    string
		reason string
		want   int
	}{
		{"2026-11-30T09:00:00Z", BudgetReasonUnderutilized, 0}, // Monday, window opens
		{"2026-11-30T16:59:59Z", BudgetReasonUnderutilized, 0}, // still inside
		{"2026-11-30T17:00:00Z", BudgetReasonUnderutilized, 2}, // closed: 10% of 12 rounded up
		{"2026-11-30T08:59:59Z", BudgetReasonUnderutilized, 2}, // before
		{"2026-11-29T12:00:00Z", BudgetReasonUnderutilized, 2}, // Sunday
		{"2026-11-30T10:00:00Z", BudgetReasonDrifted, 2},       // the 0 budget is only for Underutilized
	}
	for _, c := range cases {
		got, err := Allowed(budgets, c.reason, 12, at(c.now))
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %s: allowed %d, want %d", c.now, c.reason, got, c.want)
		}
	}
}

func TestBudgetDefaultsAndErrors(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if got, _ := Allowed(nil, BudgetReasonEmpty, 25, now); got != 3 {
		t.Errorf("default 10%% of 25 = %d, want 3 (rounded up)", got)
	}
	if got, _ := Allowed([]apiv1.Budget{{Nodes: "5"}, {Nodes: "50%"}}, BudgetReasonEmpty, 4, now); got != 2 {
		t.Errorf("min(5, 50%% of 4) = %d, want 2", got)
	}
	bad := "not a cron"
	if _, err := Allowed([]apiv1.Budget{{Nodes: "1", Schedule: &bad, Duration: &metav1.Duration{Duration: time.Hour}}}, BudgetReasonEmpty, 4, now); err == nil {
		t.Error("a bad schedule must be an error")
	}
}
