package activities

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A gang's NodeClaim is booked while it launches and, once provisioned,
// until its booking ends; other NodeClaims never are.
func TestBooked(t *testing.T) {
	now := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	nc := func(gang bool, initialized bool, until string) *apiv1.NodeClaim {
		c := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}}}
		if gang {
			c.Labels[LabelProvisioningRequest] = "ml.training"
		}
		if initialized {
			c.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
		}
		if until != "" {
			c.Annotations[AnnotationBookedUntil] = until
		}
		return c
	}
	for _, tc := range []struct {
		name string
		nc   *apiv1.NodeClaim
		want bool
	}{
		{"not a gang's", nc(false, false, ""), false},
		{"gang, launching", nc(true, false, ""), true},
		{"gang, initialized, not yet booked", nc(true, true, ""), false},
		{"gang, booked", nc(true, true, now.Add(time.Minute).Format(time.RFC3339)), true},
		{"gang, booking over", nc(true, true, now.Add(-time.Minute).Format(time.RFC3339)), false},
		{"gang, bad booking", nc(true, true, "soon"), false},
	} {
		if got := booked(tc.nc, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if why := bookedFor(tc.nc, now); (why != "") != tc.want || (tc.want && !strings.Contains(why, "ProvisioningRequest ml/training")) {
			t.Errorf("%s: bookedFor %q", tc.name, why)
		}
	}
}
