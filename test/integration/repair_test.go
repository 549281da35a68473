//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const repairMetricsAddr = "127.0.0.1:18093"

// repairScale shortens the repair tolerations 120 times:
// AcceleratedHardwareReady 10 min -> 5 s, Ready Unknown 30 min -> 15 s.
const repairScale = 1.0 / 120

func repairTuning(c *controller.Config) {
	c.FeatureGates.NodeRepair = true
	c.DisableDisruption = true // consolidation would move these pods on its own
	c.RepairInterval, c.RepairTolerationScale = time.Second, repairScale
	c.MetricsAddr = repairMetricsAddr
}

// podsOf are the app's pods by UID (Running and not being deleted: Ready).
func (e *env) runningPods(t *testing.T, app string) map[types.UID]corev1.Pod {
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	out := map[types.UID]corev1.Pod{}
	if err != nil {
		return out
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			out[p.UID] = p
		}
	}
	return out
}

// A GPU node whose AcceleratedHardwareReady goes False (XID 79) is
// repaired once its toleration has passed: a replacement is launched and
// Ready before the first of its pods is evicted, the PodDisruptionBudget
// holds throughout (at most one of the two replicas away), do-not-disrupt
// does not block it, the instance is terminated, and the disruption is
// counted as Karpenter counts it (reason unhealthy).
func TestRepairReplacesANodeWithFailedAcceleratedHardware(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, repairTuning)
	e.apply(t, readManifests(t, "testdata/repair.yaml"))
	waitFor(t, 3*time.Minute, "both trainer replicas Running", func() bool { return len(e.runningPods(t, "trainer")) == 2 })
	before := e.runningPods(t, "trainer")
	var nodeName string
	for _, p := range before {
		if nodeName != "" && p.Spec.NodeName != nodeName {
			t.Fatalf("the replicas landed on two nodes (%s, %s): the case needs one", nodeName, p.Spec.NodeName)
		}
		nodeName = p.Spec.NodeName
	}
	old := map[string]bool{}
	for _, nc := range e.nodeClaims(t) {
		old[nc.GetName()] = true
	}
	fault, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: nodeName, Condition: "AcceleratedHardwareReady"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := fault.At
	toleration := time.Duration(float64(10*time.Minute) * repairScale)

	var replacement string
	var replacementAt, replacementReadyAt, firstEvictionAt, nodeGoneAt time.Time
	minRunning := 2
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		now := time.Now()
		if replacement == "" {
			for _, nc := range e.nodeClaims(t) {
				if !old[nc.GetName()] {
					replacement, replacementAt = nc.GetName(), now
				}
			}
		}
		if replacement != "" && replacementReadyAt.IsZero() && e.nodeClaimReady(t, replacement) {
			replacementReadyAt = now
		}
		running := e.runningPods(t, "trainer")
		minRunning = min(minRunning, len(running))
		if firstEvictionAt.IsZero() {
			for uid := range before {
				if _, ok := running[uid]; !ok {
					firstEvictionAt = now
				}
			}
		}
		if _, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{}); apierrors.IsNotFound(err) && nodeGoneAt.IsZero() {
			nodeGoneAt = now
		}
		if !nodeGoneAt.IsZero() && len(running) == 2 {
			break
		}
	}
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return "t0+" + at.Sub(t0).Round(10*time.Millisecond).String()
	}
	t.Logf("AcceleratedHardwareReady=False on %s at t0 (toleration %s); replacement %s at %s, Ready at %s; first eviction at %s; node gone at %s; fewest replicas Running %d",
		nodeName, toleration, replacement, rel(replacementAt), rel(replacementReadyAt), rel(firstEvictionAt), rel(nodeGoneAt), minRunning)
	if replacementAt.IsZero() || replacementAt.Before(t0.Add(toleration)) {
		t.Errorf("replacement at %s, want one, not before the toleration (%s)", rel(replacementAt), toleration)
	}
	if replacementReadyAt.IsZero() || firstEvictionAt.IsZero() || !replacementReadyAt.Before(firstEvictionAt) {
		t.Errorf("replacement Ready at %s, first eviction at %s: want the replacement Ready first", rel(replacementReadyAt), rel(firstEvictionAt))
	}
	if minRunning < 1 {
		t.Errorf("fewest trainer replicas Running %d: the PodDisruptionBudget allows one away", minRunning)
	}
	if nodeGoneAt.IsZero() {
		t.Fatalf("node %s never went", nodeName)
	}
	waitFor(t, time.Minute, "the unhealthy instance terminated", func() bool {
		in, ok := e.w.EC2.Instance(fault.InstanceID)
		return !ok || in.State == ec2.StateTerminated
	})
	var res workflows.RepairResult
	if err := e.tc.GetWorkflow(e.ctx, workflows.RepairWorkflowID(nodeName), "").Get(e.ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != workflows.PhaseDone || res.Evicted != 2 || len(res.Replacements) != 1 || res.Replacements[0] != replacement || res.ReplacementFailed != "" {
		t.Errorf("repair result %+v", res)
	}
	e.expectEvent(t, nodeName, workflows.EventNodeRepair, "AcceleratedHardwareReady=False")
	fams := scrapeFamilies(t, e.addr(repairMetricsAddr))
	if got := sumOf(fams, "karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "unhealthy", "nodepool": "gpu"}); got != 1 {
		t.Errorf("karpenter_nodeclaims_disrupted_total{reason=unhealthy} = %v, want 1", got)
	}
	recordHistories(t, e, workflows.RepairWorkflowID(nodeName))
}

// nodeClaimReady: the NodeClaim is Initialized (its Node Ready).
func (e *env) nodeClaimReady(t *testing.T, name string) bool {
	for _, nc := range e.nodeClaims(t) {
		if nc.GetName() != name {
			continue
		}
		u, ok := nc.(interface{ UnstructuredContent() map[string]interface{} })
		if !ok {
			return false
		}
		st, _ := u.UnstructuredContent()["status"].(map[string]interface{})
		conds, _ := st["conditions"].([]interface{})
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			if m["type"] == "Initialized" && m["status"] == "True" {
				return true
			}
		}
	}
	return false
}

// expectEvent waits for an Event of reason on the named object whose
// message holds want.
func (e *env) expectEvent(t *testing.T, object, reason, want string) {
	t.Helper()
	waitFor(t, 30*time.Second, "Event "+reason+" on "+object, func() bool {
		evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + object + ",reason=" + reason})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, want) {
				return true
			}
		}
		return false
	})
}
