// Package capacity holds the services the controller and the activities
// share about capacity: the pending-pod ledger (which pending pods are
// left to plan, the same on every replica) and the NodeClaims' nominations
// it leaves out, node prices after NodeOverlays, instance type lookup over
// the live and embedded catalogs, and what the capacity buffers' checks
// remember between passes (Headroom). None needs the activities.
package capacity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// UnschedulableRetry is how long a pod the solver could place nowhere is
// left alone before it is planned again (unless a NodePool changes).
const UnschedulableRetry = 5 * time.Minute

// Ledger is the pending-pod ledger: by pod UID, when a plan found a
// pod no place and when it placed one on an existing node (the pod memo,
// the same on every replica through the shared state), and from it how
// many pending pods are left to plan. Plans write it (PlanProvisioning);
// the provisioner and consolidation read it. It is safe for concurrent use.
type Ledger struct {
	memo   sharedstate.PodMemo
	writer string // this process's memo key suffix

	state     *kube.StateStore // nil: this process's memory only
	log       *zap.Logger
	pending   func() []*corev1.Pod                             // pending unschedulable pods
	nominated func([]*corev1.Pod, time.Time) map[string]string // pod UID -> live NodeClaim
	window    func() time.Duration                             // the nomination window
}

// sharedStateWriteTimeout bounds one write of the shared memo; a write that
// fails is logged and the memo stays in this replica's memory.
const sharedStateWriteTimeout = 10 * time.Second

// NewLedger makes a ledger over the pending unschedulable pods (pending),
// the live nominations among them (nominated: pod UID -> NodeClaim) and
// the nomination window; state, when set, shares it between replicas (nil:
// this process's memory only).
func NewLedger(state *kube.StateStore, log *zap.Logger, pending func() []*corev1.Pod,
	nominated func([]*corev1.Pod, time.Time) map[string]string, window func() time.Duration) *Ledger {
	l := &Ledger{state: state, log: log, pending: pending, nominated: nominated, window: window}
	if state != nil {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		l.writer = hex.EncodeToString(b)
	}
	return l
}

// Remembered is when the memo last recorded the pod (by UID) as kind
// (sharedstate.KindUnschedulable, sharedstate.KindOnExisting).
func (l *Ledger) Remembered(kind, uid string) (time.Time, bool) { return l.memo.Lookup(kind, uid) }

// UnnominatedPending counts pending unschedulable pods that no live
// NodeClaim was launched for and that were not just found unschedulable:
// the pods a new Provision batch would work on.
func (l *Ledger) UnnominatedPending(now time.Time) int {
	return l.count(now, false)
}

// PendingToPlan is UnnominatedPending without the pods the last plans
// placed on existing nodes within the nomination window: the
// kube-scheduler binds those at its own pace, and counting them made the
// provisioner run a Provision every resync that only placed them again.
func (l *Ledger) PendingToPlan(now time.Time) int {
	return l.count(now, true)
}

func (l *Ledger) count(now time.Time, skipOnExisting bool) int {
	pending := l.pending()
	if len(pending) == 0 {
		return 0 // at rest: no pass over every NodeClaim's nominees
	}
	nominated := l.nominated(pending, now)
	n := 0
	for _, p := range pending {
		uid := string(p.UID)
		if _, ok := nominated[uid]; ok {
			continue
		}
		if at, ok := l.memo.Lookup(sharedstate.KindUnschedulable, uid); ok && now.Sub(at) < UnschedulableRetry {
			continue
		}
		if skipOnExisting {
			if at, ok := l.memo.Lookup(sharedstate.KindOnExisting, uid); ok && now.Sub(at) < l.window() {
				continue
			}
		}
		n++
	}
	return n
}

// ForgetUnschedulable lets every pod be planned again (a NodePool's spec
// changed): a marker in the shared memo voids every earlier entry on every
// replica. The write happens in the background (it is called from an
// informer handler).
func (l *Ledger) ForgetUnschedulable() {
	now := time.Now()
	k, v := l.memo.Forget(now)
	if l.state != nil {
		go l.persist(context.Background(), map[string]string{k: v}, nil, now)
	}
}

// Record records, by pod UID, the pods a plan found no place for
// (unschedulable) and those it placed on existing nodes, here and in the
// shared memo; entries past their window are dropped.
func (l *Ledger) Record(ctx context.Context, unschedulable, onExisting []string, now time.Time) {
	set := map[string]string{}
	if k, v := l.memo.Record(sharedstate.KindUnschedulable, unschedulable, now, l.writer); k != "" {
		set[k] = v
	}
	if k, v := l.memo.Record(sharedstate.KindOnExisting, onExisting, now, l.writer); k != "" {
		set[k] = v
	}
	expired := l.memo.Expire(now, l.retention())
	l.persist(ctx, set, expired, now)
}

// Bind merges what any replica writes to the shared pod memo into this
// one. Call it before the StateStore starts.
func (l *Ledger) Bind() {
	if l.state != nil {
		l.state.OnChange(sharedstate.PodMemoConfigMap, l.memo.Merge)
	}
}

// retention is how long each kind of memo entry matters.
func (l *Ledger) retention() map[string]time.Duration {
	return map[string]time.Duration{
		sharedstate.KindUnschedulable: UnschedulableRetry,
		sharedstate.KindOnExisting:    l.window(),
	}
}

// persist writes memo entries (and drops the expired ones) in the shared
// pod memo.
func (l *Ledger) persist(ctx context.Context, set map[string]string, expired []string, now time.Time) {
	if l.state == nil || (len(set) == 0 && len(expired) == 0) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sharedStateWriteTimeout)
	defer cancel()
	ret := l.retention()
	if _, err := l.state.Put(ctx, sharedstate.PodMemoConfigMap, set, expired, func(data map[string]string) []string {
		return sharedstate.ExpiredMemo(data, now, ret)
	}); err != nil {
		l.log.Warn("pending-pod memo not shared (kept in this replica)", zap.Int("entries", len(set)), zap.Error(err))
	}
}
