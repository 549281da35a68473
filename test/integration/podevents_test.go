//go:build integration

package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/sim/world"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// consolidateAfter counts from the last pod event, kept on the NodeClaim:
// 50 inflate pods bound write each node's status.lastPodEventTime (no
// earlier than its pods were scheduled), deleting a pod moves it, and
// nodes long past consolidateAfter since initialization become
// Consolidatable only consolidateAfter after their last pod event. Scaled
// to 5, no node is tainted for disruption before consolidateAfter has
// passed since its last pod event (before, the clock was initialization,
// so these nodes went at once).
func TestConsolidateAfterCountsFromTheLastPodEvent(t *testing.T) {
	parallel(t)
	const after = 30 * time.Second
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	applyInflate(t, e, after.String(), "100%")
	if _, err := world.WaitSettled(e.ctx, e.kc, 50, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	claims := func() map[string]*apiv1.NodeClaim { // by node name
		out := map[string]*apiv1.NodeClaim{}
		for _, nc := range e.nodeClaimObjs(t, dc) {
			if nc.Status.NodeName != "" {
				out[nc.Status.NodeName] = nc
			}
		}
		return out
	}
	// latestScheduled is, by node, when its last inflate pod was scheduled.
	latestScheduled := func() map[string]time.Time {
		pods, _ := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
		out := map[string]time.Time{}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(out[p.Spec.NodeName]) {
					out[p.Spec.NodeName] = c.LastTransitionTime.Time
				}
			}
		}
		return out
	}

	// 1. Binding wrote the clock: every node's lastPodEventTime is no
	// earlier than its last pod's scheduling (events inside the 10 s
	// dedupe window are written when it ends).
	waitFor(t, 30*time.Second, "lastPodEventTime at or after each node's last binding", func() bool {
		cs, sched := claims(), latestScheduled()
		for node, at := range sched {
			nc := cs[node]
			if nc == nil || nc.Status.LastPodEventTime == nil || nc.Status.LastPodEventTime.Before(&metav1.Time{Time: at}) {
				return false
			}
		}
		return len(sched) > 0
	})
	for node, nc := range claims() {
		t.Logf("%s: initialized %s, lastPodEventTime %s", node, disruption.InitializedAt(nc).Format(time.RFC3339), disruption.LastPodEvent(nc).Format(time.RFC3339))
	}

	// 2. Deleting a pod moves its node's clock to at least the deletion.
	pods, _ := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
	victim := pods.Items[0]
	asked := time.Now().Truncate(time.Second)
	if err := e.kc.CoreV1().Pods("default").Delete(e.ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "lastPodEventTime moved by the pod's deletion", func() bool {
		nc := claims()[victim.Spec.NodeName]
		return nc != nil && !disruption.LastPodEvent(nc).Before(asked)
	})
	t.Logf("deleted %s on %s at %s: lastPodEventTime %s", victim.Name, victim.Spec.NodeName, asked.Format(time.RFC3339),
		disruption.LastPodEvent(claims()[victim.Spec.NodeName]).Format(time.RFC3339))

	// 3. Watch every node: when it is first seen tainted for disruption,
	// the clock it had just before must be consolidateAfter old.
	type taken struct {
		at, clock, init time.Time
	}
	var mu sync.Mutex
	seen := map[string]taken{}
	clockOf := map[string]time.Time{}
	initOf := map[string]time.Time{}
	wctx, stop := context.WithCancel(e.ctx)
	defer stop()
	go func() {
		for wctx.Err() == nil {
			cs := claims()
			nodes, err := e.kc.CoreV1().Nodes().List(wctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool})
			now := time.Now()
			if err == nil {
				mu.Lock()
				for _, n := range nodes.Items {
					if _, done := seen[n.Name]; done {
						continue
					}
					disrupted := n.DeletionTimestamp != nil
					for _, tt := range n.Spec.Taints {
						disrupted = disrupted || tt.Key == apiv1.TaintKeyDisrupted
					}
					if disrupted {
						if c, ok := clockOf[n.Name]; ok {
							seen[n.Name] = taken{at: now, clock: c, init: initOf[n.Name]}
						}
						continue
					}
					if nc := cs[n.Name]; nc != nil {
						clockOf[n.Name], initOf[n.Name] = disruption.ConsolidationClock(nc), disruption.InitializedAt(nc)
					}
				}
				mu.Unlock()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()

	// 4. Nodes initialized over consolidateAfter ago: a node becomes
	// Consolidatable only once consolidateAfter has passed since its last
	// pod event.
	waitFor(t, 2*time.Minute, "every node initialized over consolidateAfter ago", func() bool {
		for _, nc := range claims() {
			if time.Since(disruption.InitializedAt(nc)) < after+5*time.Second {
				return false
			}
		}
		return true
	})
	waitFor(t, time.Minute, "the Consolidatable condition true to each node's clock", func() bool {
		for _, nc := range claims() {
			since := time.Since(disruption.ConsolidationClock(nc))
			cond := apiv1.IsConditionTrue(nc.Status.Conditions, apiv1.ConditionConsolidatable)
			// (Between a clock write and the condition's reconcile the two
			// may disagree for a moment: wait that out.)
			if nc.DeletionTimestamp == nil && ((since < after-time.Second && cond) || (since > after+3*time.Second && !cond)) {
				return false
			}
		}
		return true
	})

	// 5. Scale to 5: the pods leaving are the nodes' last pod events.
	scaled := time.Now()
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "inflate", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 4*time.Minute, "nodes disrupted after the scale-down", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, s := range seen {
			if s.at.After(scaled) {
				n++
			}
		}
		return n >= 2
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	waited := 0
	for node, s := range seen {
		t.Logf("%s tainted %s after the scale-down: initialized %s, last pod event %s, tainted %s after it",
			node, s.at.Sub(scaled).Round(time.Second), s.init.Format(time.RFC3339), s.clock.Format(time.RFC3339), s.at.Sub(s.clock).Round(time.Second))
		if s.at.Sub(s.clock) < after {
			t.Errorf("%s tainted %s after its last pod event, before consolidateAfter %s", node, s.at.Sub(s.clock), after)
		}
		// Initialized long before the scale-down: the old clock
		// (initialization) would have let it go at once.
		if s.at.After(scaled) && s.init.Add(after).Before(scaled) && s.clock.After(scaled) {
			waited++
		}
	}
	if waited == 0 {
		t.Error("no node old enough to be taken at once waited for its pod-event clock: the test proves nothing")
	}
}
