package disruption

import (
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func at(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// testClaim is initialized at t0-1h; the pool's consolidateAfter is 1m.
func TestConsolidateAfterCountsFromTheLastPodEvent(t *testing.T) {
	pool := testPool("general-purpose")
	init := t0.Add(-time.Hour)
	cases := []struct {
		name     string
		after    string
		lastPod  *metav1.Time
		initOff  bool
		wantAt   time.Time
		wantOK   bool
		atT0     bool // consolidatable at t0
		atT0Plus bool // consolidatable at t0+30s
	}{
		{"no pod event: from initialization", "1m", nil, false, init.Add(time.Minute), true, true, true},
		{"a pod event 30s ago moves the clock", "1m", at(t0.Add(-30 * time.Second)), false, t0.Add(30 * time.Second), true, false, true},
		{"a pod event before initialization does not", "1m", at(init.Add(-time.Minute)), false, init.Add(time.Minute), true, true, true},
		{"consolidateAfter unset is 0s", "", at(t0), false, t0, true, true, true},
		{"consolidateAfter 0s: right after the event", "0s", at(t0.Add(time.Second)), false, t0.Add(time.Second), true, false, true},
		{"consolidateAfter Never", "Never", at(t0.Add(-time.Hour)), false, time.Time{}, false, false, false},
		{"not initialized", "1m", nil, true, time.Time{}, false, false, false},
	}
	for _, c := range cases {
		_, nc := testClaim(0, pool)
		nc.Status.LastPodEventTime = c.lastPod
		if c.initOff {
			nc.Status.Conditions = nil
		}
		cp := *pool
		cp.Spec.Disruption.ConsolidateAfter = c.after
		p := &cp
		got, ok := ConsolidatableAt(nc, p)
		if !got.Equal(c.wantAt) || ok != c.wantOK {
			t.Errorf("%s: ConsolidatableAt = %v %v, want %v %v", c.name, got, ok, c.wantAt, c.wantOK)
		}
		if IsConsolidatable(nc, p, t0) != c.atT0 || IsConsolidatable(nc, p, t0.Add(30*time.Second)) != c.atT0Plus {
			t.Errorf("%s: consolidatable at t0 %v, at t0+30s %v; want %v, %v", c.name,
				IsConsolidatable(nc, p, t0), IsConsolidatable(nc, p, t0.Add(30*time.Second)), c.atT0, c.atT0Plus)
		}
	}
	if _, ok := ConsolidatableAt(&apiv1.NodeClaim{}, nil); ok {
		t.Error("a NodeClaim without a pool is consolidatable")
	}
}

// The Consolidatable condition through a node's life: absent until
// initialized and consolidateAfter passed (requeued for that moment),
// True, absent again after a pod event, absent for good with Never.
func TestConsolidatableConditionTransitions(t *testing.T) {
	pool := testPool("general-purpose")
	pool.Spec.Disruption.ConsolidateAfter = "5m"
	_, nc := testClaim(0, pool)
	init := t0.Add(-time.Hour)
	steps := []struct {
		name    string
		change  func()
		now     time.Time
		want    bool
		requeue time.Duration
	}{
		{"launching: nothing to wait for", func() { nc.Status.Conditions = nil }, init.Add(-time.Minute), false, 0},
		{"initialized a minute ago", func() {
			nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(init)}}
		}, init.Add(time.Minute), false, 4 * time.Minute},
		{"consolidateAfter passed", func() {}, init.Add(5 * time.Minute), true, 0},
		{"a pod bound 2m ago", func() { nc.Status.LastPodEventTime = at(t0.Add(-2 * time.Minute)) }, t0, false, 3 * time.Minute},
		{"the window after it passed", func() {}, t0.Add(3 * time.Minute), true, 0},
		{"consolidateAfter Never", func() { pool.Spec.Disruption.ConsolidateAfter = "Never" }, t0.Add(time.Hour), false, 0},
	}
	for _, s := range steps {
		s.change()
		want, requeue := ConsolidatableState(nc, pool, s.now)
		if want != s.want || requeue != s.requeue {
			t.Errorf("%s: consolidatable %v requeue %v, want %v %v", s.name, want, requeue, s.want, s.requeue)
		}
	}
}

func TestPodEventRules(t *testing.T) {
	now := metav1.NewTime(t0)
	grace := int64(30)
	mk := func(node string, mut ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		for _, m := range mut {
			m(p)
		}
		return p
	}
	terminating := func(p *corev1.Pod) { p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	failed := func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}}
	}
	relabelled := func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} }
	const n = "ip-10-0-0-10.ec2.internal"
	cases := []struct {
		name     string
		old, pod *corev1.Pod
		ok       bool
	}{
		{"bound by the scheduler", mk(""), mk(n), true},
		{"went terminating", mk(n), mk(n, terminating), true},
		{"succeeded", mk(n), mk(n, succeeded), true},
		{"failed", mk(n), mk(n, failed), true},
		{"created bound", nil, mk(n), true},
		{"deleted while running (forced)", mk(n), nil, true},
		{"a status or label update is not an event", mk(n), mk(n, relabelled), false},
		{"still terminating", mk(n, terminating), mk(n, terminating, relabelled), false},
		{"terminal, then terminating", mk(n, succeeded), mk(n, succeeded, terminating), true},
		{"still terminal", mk(n, failed), mk(n, failed, relabelled), false},
		{"deleted after terminating: counted when it started", mk(n, terminating), nil, false},
		{"deleted after finishing", mk(n, succeeded), nil, false},
		{"pending pod created", nil, mk(""), false},
		{"pending pod deleted", mk(""), nil, false},
		{"pending pod updated", mk(""), mk("", relabelled), false},
		{"DaemonSet pod bound", mk("", daemon), mk(n, daemon), false},
		{"DaemonSet pod terminating", mk(n, daemon), mk(n, daemon, terminating), false},
		{"DaemonSet pod deleted", mk(n, daemon), nil, false},
		{"nothing", nil, nil, false},
	}
	for _, c := range cases {
		node, ok := PodEvent(c.old, c.pod)
		if ok != c.ok || (ok && node != n) {
			t.Errorf("%s: PodEvent = %q %v, want %v", c.name, node, ok, c.ok)
		}
	}
}

func TestPodEventTimeFromThePodsOwnRecord(t *testing.T) {
	sched := t0.Add(-10 * time.Minute)
	grace := int64(30)
	del := metav1.NewTime(t0)
	mk := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(sched)}}}}
		mut(p)
		return p
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want time.Time
	}{
		{"running: when it was scheduled", mk(func(*corev1.Pod) {}), sched},
		{"terminating: when the deletion was asked for", mk(func(p *corev1.Pod) { p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &del, &grace }),
			t0.Add(-30 * time.Second)},
		{"finished: its last container's finish", mk(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(-2 * time.Minute))}}},
				{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(-time.Minute))}}},
			}
		}), t0.Add(-time.Minute)},
		{"failed without container states: its Ready transition", mk(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(t0.Add(-3 * time.Minute))})
		}), t0.Add(-3 * time.Minute)},
		{"a DaemonSet pod records none", mk(func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent"}} }), time.Time{}},
		{"a pending pod records none", mk(func(p *corev1.Pod) { p.Spec.NodeName = "" }), time.Time{}},
	}
	for _, c := range cases {
		if got := PodEventTime(c.pod); !got.Equal(c.want) {
			t.Errorf("%s: PodEventTime = %v, want %v", c.name, got, c.want)
		}
	}
}

// A pod event between a decision and its validation drops an emptiness or
// consolidation decision; drift does not wait for consolidateAfter.
func TestConsolidateAfterRecheck(t *testing.T) {
	pool := testPool("general-purpose")
	n0, c0 := testClaim(0, pool)
	n1, c1 := testClaim(1, pool)
	c1.Status.LastPodEventTime = at(t0.Add(-20 * time.Second))
	cands := []Candidate{{Node: n0, Claim: c0, Pool: pool}, {Node: n1, Claim: c1, Pool: pool}}
	cases := []struct {
		d    saga.DisruptionDecision
		want string
	}{
		{saga.DisruptionDecision{Method: saga.MethodEmptiness, Nodes: []string{n0.Name}}, ""},
		{saga.DisruptionDecision{Method: saga.MethodMultiNode, Nodes: []string{n0.Name, n1.Name}},
			"node ip-10-0-0-11.ec2.internal had a pod event at 2026-11-29T11:59:40Z: consolidatable again at 2026-11-29T12:00:40Z"},
		{saga.DisruptionDecision{Method: saga.MethodSingleNode, Nodes: []string{n1.Name}},
			"node ip-10-0-0-11.ec2.internal had a pod event at 2026-11-29T11:59:40Z: consolidatable again at 2026-11-29T12:00:40Z"},
		{saga.DisruptionDecision{Method: saga.MethodDrift, Nodes: []string{n1.Name}}, ""},
		{saga.DisruptionDecision{Method: saga.MethodSingleNode, Nodes: []string{"gone"}}, ""}, // Recheck's to say
	}
	for _, c := range cases {
		if got := ConsolidateAfterRecheck(c.d, cands, t0); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.d.Method, c.d.Nodes, got, c.want)
		}
	}
	never := *pool
	never.Spec.Disruption.ConsolidateAfter = "Never"
	cands[0].Pool = &never
	d := saga.DisruptionDecision{Method: saga.MethodEmptiness, Nodes: []string{n0.Name}}
	if got := ConsolidateAfterRecheck(d, cands, t0); got != "node ip-10-0-0-10.ec2.internal is no longer consolidatable (its NodePool's consolidateAfter is Never)" {
		t.Errorf("Never: %q", got)
	}
}
