package drain

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type podOpt func(*corev1.Pod)

func mk(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func critical(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }
func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds"}}
}
func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func tolerates(t corev1.Toleration) podOpt {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, t) }
}
func grace(s int64) podOpt { return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &s } }

func TestTier(t *testing.T) {
	cases := []struct {
		pod  *corev1.Pod
		want int
	}{
		{mk("web"), TierNonCritical},
		{mk("agent", daemon), TierNonCriticalDaemon},
		{mk("dns", critical), TierCritical},
		{mk("cni", critical, daemon), TierCriticalDaemon},
		{mk("cluster-critical", func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" }), TierCritical},
	}
	for _, c := range cases {
		if got := Tier(c.pod); got != c.want {
			t.Errorf("Tier(%s) = %d, want %d", c.pod.Name, got, c.want)
		}
	}
}

func TestWaitedOn(t *testing.T) {
	cases := []struct {
		pod  *corev1.Pod
		want bool
	}{
		{mk("running"), true},
		{mk("succeeded", phase(corev1.PodSucceeded)), false},
		{mk("failed", phase(corev1.PodFailed)), false},
		{mk("mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }), false},
		{mk("tolerates-disrupted", tolerates(corev1.Toleration{Key: apiv1.TaintKeyDisrupted, Operator: corev1.TolerationOpExists})), false},
		{mk("tolerates-everything", tolerates(corev1.Toleration{Operator: corev1.TolerationOpExists})), false},
		{mk("tolerates-noexecute-only", tolerates(corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})), true},
		{mk("tolerates-other", tolerates(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})), true},
	}
	for _, c := range cases {
		if got := WaitedOn(c.pod); got != c.want {
			t.Errorf("WaitedOn(%s) = %v, want %v", c.pod.Name, got, c.want)
		}
	}
}

func TestForceDeleteAt(t *testing.T) {
	deadline := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		pod      *corev1.Pod
		deadline time.Time
		want     time.Time
	}{
		{"no deadline", mk("a"), time.Time{}, time.Time{}},
		{"default grace", mk("a"), deadline, deadline.Add(-30 * time.Second)},
		{"own grace", mk("a", grace(120)), deadline, deadline.Add(-2 * time.Minute)},
		{"zero grace", mk("a", grace(0)), deadline, deadline},
	}
	for _, c := range cases {
		if got := ForceDeleteAt(c.pod, c.deadline); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNext(t *testing.T) {
	cases := []struct {
		name      string
		pods      []*corev1.Pod
		remaining int
		tier      int
		next      []string
	}{
		{"nothing", nil, 0, 0, nil},
		{"only finished", []*corev1.Pod{mk("done", phase(corev1.PodSucceeded))}, 0, 0, nil},
		{"non-critical first, by name", []*corev1.Pod{mk("b"), mk("cni", critical, daemon), mk("a"), mk("agent", daemon)}, 4, TierNonCritical, []string{"default/a", "default/b"}},
		{"then daemons", []*corev1.Pod{mk("cni", critical, daemon), mk("agent", daemon)}, 2, TierNonCriticalDaemon, []string{"default/agent"}},
		{"critical daemons last", []*corev1.Pod{mk("cni", critical, daemon)}, 1, TierCriticalDaemon, []string{"default/cni"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			remaining, tier, next := Next(c.pods)
			var names []string
			for _, p := range next {
				names = append(names, Key(p))
			}
			if remaining != c.remaining || tier != c.tier || len(names) != len(c.next) {
				t.Fatalf("Next = %d, %d, %v; want %d, %d, %v", remaining, tier, names, c.remaining, c.tier, c.next)
			}
			for i := range names {
				if names[i] != c.next[i] {
					t.Fatalf("next %v, want %v", names, c.next)
				}
			}
		})
	}
}
