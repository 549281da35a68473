package staticpool

import (
	"reflect"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func m(name string, ready bool, pods int, age time.Duration) Member {
	return Member{Name: name, Ready: ready, Pods: pods, Created: t0.Add(-age)}
}

func TestWant(t *testing.T) {
	for _, c := range []struct {
		replicas int64
		limit    int
		want     int
	}{{3, -1, 3}, {3, 2, 2}, {3, 5, 3}, {0, -1, 0}, {3, 0, 0}, {-1, -1, 0}} {
		if got := Want(c.replicas, c.limit); got != c.want {
			t.Errorf("Want(%d, %d) = %d, want %d", c.replicas, c.limit, got, c.want)
		}
	}
}

func TestDecide(t *testing.T) {
	three := []Member{m("a", true, 2, 3*time.Hour), m("b", true, 0, 2*time.Hour), m("c", true, 5, time.Hour)}
	deleting := m("d", true, 1, time.Hour)
	deleting.Deleting = true
	cases := []struct {
		name     string
		replicas int64
		limit    int
		members  []Member
		pending  int
		want     Scale
	}{
		{"empty pool of 3", 3, -1, nil, 0, Scale{Want: 3, Have: 0, Create: 3}},
		{"steady", 3, -1, three, 0, Scale{Want: 3, Have: 3}},
		{"one lost", 3, -1, three[:2], 0, Scale{Want: 3, Have: 2, Create: 1}},
		{"a deleting member does not count", 3, -1, append(three[:2:2], deleting), 0, Scale{Want: 3, Have: 2, Create: 1}},
		{"pending creations count", 3, -1, three[:1], 2, Scale{Want: 3, Have: 3}},
		{"limits.nodes caps", 5, 4, three, 0, Scale{Want: 4, Have: 3, Create: 1}},
		{"limits.nodes below members", 3, 1, three, 0, Scale{Want: 1, Have: 3, Delete: []string{"b", "a"}}},
		{"scale down: fewest pods first", 1, -1, three, 0, Scale{Want: 1, Have: 3, Delete: []string{"b", "a"}}},
		{"scale down to 0", 0, -1, three, 0, Scale{Want: 0, Have: 3, Delete: []string{"b", "a", "c"}}},
		{"not ready first, then newest", 2, -1, []Member{m("x", true, 0, time.Hour), m("y", false, 9, 3*time.Hour),
			m("z", true, 0, 2*time.Hour), m("w", true, 0, time.Minute)}, 0, Scale{Want: 2, Have: 4, Delete: []string{"y", "w"}}},
		{"surplus waits for pending creations", 1, -1, three, 1, Scale{Want: 1, Have: 4}},
	}
	for _, c := range cases {
		got := Decide(c.replicas, c.limit, c.members, c.pending)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTerminating(t *testing.T) {
	cond := func(typ, status string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status)}
	}
	for _, c := range []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{"no conditions", nil, false},
		{"initialized only", []metav1.Condition{cond(apiv1.ConditionInitialized, "True")}, false},
		{"instance terminating", []metav1.Condition{cond(apiv1.ConditionInitialized, "True"), cond(apiv1.ConditionInstanceTerminating, "True")}, true},
		{"instance terminating false", []metav1.Condition{cond(apiv1.ConditionInstanceTerminating, "False")}, false},
		{"disruption begun", []metav1.Condition{cond(apiv1.ConditionDisruptionReason, "True")}, true},
		{"disruption unknown", []metav1.Condition{cond(apiv1.ConditionDisruptionReason, "Unknown")}, false},
		{"drifted class only", []metav1.Condition{cond(apiv1.ConditionDrifted, "True")}, false},
	} {
		nc := &apiv1.NodeClaim{}
		nc.Status.Conditions = c.conds
		if got := Terminating(nc); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
