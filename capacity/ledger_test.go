package capacity

import (
	"context"
	"github.com/joinery/joinery/policy/sharedstate"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestLedgerCountsWhatIsLeftToPlan(t *testing.T) {
	// ForgetUnschedulable marks the memo at the wall clock: plan just before it.
	now := time.Now().Add(-time.Second)
	pod := func(uid string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	pending := []*corev1.Pod{pod("a"), pod("b"), pod("c"), pod("d")}
	l := NewLedger(nil, zap.NewNop(), func() []*corev1.Pod { return pending },
		func([]*corev1.Pod, time.Time) map[string]string { return map[string]string{"a": "nodeclaim-1"} },
		func() time.Duration { return time.Minute })
	// b found no place, c placed on an existing node; a is nominated.
	l.Record(context.Background(), []string{"b"}, []string{"c"}, now)
	for _, tc := range []struct {
		name            string
		at              time.Time
		unnominated     int
		toPlan          int
		wantRememberedB bool
	}{
		{name: "just planned", at: now.Add(time.Second), unnominated: 2, toPlan: 1, wantRememberedB: true},
		{name: "past the nomination window", at: now.Add(2 * time.Minute), unnominated: 2, toPlan: 2, wantRememberedB: true},
		{name: "past the unschedulable retry", at: now.Add(UnschedulableRetry + time.Second), unnominated: 3, toPlan: 3, wantRememberedB: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := l.UnnominatedPending(tc.at); got != tc.unnominated {
				t.Errorf("UnnominatedPending = %d, want %d", got, tc.unnominated)
			}
			if got := l.PendingToPlan(tc.at); got != tc.toPlan {
				t.Errorf("PendingToPlan = %d, want %d", got, tc.toPlan)
			}
			if _, ok := l.Remembered(sharedstate.KindUnschedulable, "b"); ok != tc.wantRememberedB {
				t.Errorf("b remembered = %v", ok)
			}
		})
	}
	l.ForgetUnschedulable()
	if got := l.UnnominatedPending(now.Add(2 * time.Second)); got != 3 {
		t.Errorf("after ForgetUnschedulable: UnnominatedPending = %d, want 3 (every pod but the nominated one)", got)
	}
}

// With nothing pending the ledger answers 0 without asking for the
// nominations (a pass over every NodeClaim, every resync, at rest).
func TestLedgerAtRestAsksNoNominations(t *testing.T) {
	asked := 0
	l := NewLedger(nil, zap.NewNop(), func() []*corev1.Pod { return nil },
		func([]*corev1.Pod, time.Time) map[string]string { asked++; return nil },
		func() time.Duration { return time.Minute })
	if got := l.PendingToPlan(time.Now()) + l.UnnominatedPending(time.Now()); got != 0 || asked != 0 {
		t.Errorf("at rest: %d pending, nominations asked %d times; want 0 and 0", got, asked)
	}
}
