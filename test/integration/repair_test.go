//go:build integration

package integration

import (
	"slices"
	"strconv"
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

// runningPods are the app's pods by UID (Running and not being deleted: Ready).
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
	// The condition's lastTransitionTime, all a controller can read, holds
	// whole seconds (as a kubelet's): the toleration counts from t0 so truncated.
	if replacementAt.IsZero() || replacementAt.Before(t0.Truncate(time.Second).Add(toleration)) {
		t.Errorf("replacement at %s, want one, not before the toleration (%s) from the condition's lastTransitionTime", rel(replacementAt), toleration)
	}
	// Seen in the same poll the two cannot be ordered: only an eviction seen
	// at an earlier poll than the replacement's Ready is out of order.
	if replacementReadyAt.IsZero() || firstEvictionAt.IsZero() || firstEvictionAt.Before(replacementReadyAt) {
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
	e.waitDisrupted(t, "gpu", 1)
	recordHistories(t, e, workflows.RepairWorkflowID(nodeName))
}

// runningCount is how many of the app's pods run (-1: the list failed).
func (e *env) runningCount(app string) int {
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			n++
		}
	}
	return n
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

// A node whose kubelet stops posting status goes Ready=Unknown after the
// node monitor grace period (the world plays the node lifecycle
// controller); once the toleration has passed it is repaired at once:
// no drain (nothing would run it), its pods deleted and the instance
// terminated, and the pods (a do-not-disrupt Job pod, a ReplicaSet pod)
// run again on a new node.
func TestRepairTerminatesAnUnreachableNode(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, repairTuning)
	e.apply(t, readManifests(t, "testdata/interruption.yaml"))
	running := func() map[string]corev1.Pod { // by app label
		out := map[string]corev1.Pod{}
		for _, app := range []string{"batch", "steady"} {
			for _, p := range e.runningPods(t, app) {
				out[app] = p
			}
		}
		return out
	}
	waitFor(t, 3*time.Minute, "the Job pod and the ReplicaSet pod Running", func() bool { return len(running()) == 2 })
	before := running()
	nodeName := before["steady"].Spec.NodeName
	if before["batch"].Spec.NodeName != nodeName {
		t.Fatalf("the pods landed on two nodes (%s, %s): the case needs one", nodeName, before["batch"].Spec.NodeName)
	}
	grace := 3 * time.Second
	fault, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: nodeName, Kind: world.FaultKubeletStopped, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the node Ready=Unknown and tainted unreachable", func() bool {
		n, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		unknown := false
		for _, c := range n.Status.Conditions {
			unknown = unknown || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown && c.Reason == "NodeStatusUnknown")
		}
		tainted := false
		for _, tn := range n.Spec.Taints {
			tainted = tainted || (tn.Key == corev1.TaintNodeUnreachable && tn.Effect == corev1.TaintEffectNoExecute)
		}
		return unknown && tainted
	})
	unknownAt := time.Now()
	waitFor(t, 2*time.Minute, "the unreachable instance terminated", func() bool {
		in, ok := e.w.EC2.Instance(fault.InstanceID)
		return !ok || in.State == ec2.StateTerminated
	})
	in, _ := e.w.EC2.Instance(fault.InstanceID)
	toleration := time.Duration(float64(30*time.Minute) * repairScale)
	t.Logf("kubelet of %s stopped at t0; Ready=Unknown seen at t0+%s; TerminateInstances at t0+%s (toleration %s)", nodeName,
		unknownAt.Sub(fault.At).Round(10*time.Millisecond), in.TerminateTime.Sub(fault.At).Round(10*time.Millisecond), toleration)
	// Counted, as the repair controller counts, from the condition's
	// lastTransitionTime (whole seconds).
	if !in.TerminateTime.IsZero() && in.TerminateTime.Before(fault.UnknownAt.Truncate(time.Second).Add(toleration)) {
		t.Errorf("terminated at %s, before Ready=Unknown (%s) plus its toleration %s", in.TerminateTime, fault.UnknownAt, toleration)
	}
	var res workflows.RepairResult
	if err := e.tc.GetWorkflow(e.ctx, workflows.RepairWorkflowID(nodeName), "").Get(e.ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != workflows.PhaseDone || res.Deleted < 2 || len(res.Replacements) != 0 || res.Evicted != 0 {
		t.Errorf("repair result %+v, want its pods deleted (at least the two), no eviction, no replacement waited for", res)
	}
	waitFor(t, 3*time.Minute, "both pods Running again on another node", func() bool {
		r := running()
		return len(r) == 2 && r["batch"].UID != before["batch"].UID && r["steady"].UID != before["steady"].UID &&
			r["batch"].Spec.NodeName != nodeName && r["steady"].Spec.NodeName != nodeName
	})
	waitFor(t, time.Minute, "the unreachable Node deleted", func() bool {
		_, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	e.expectEvent(t, nodeName, workflows.EventNodeRepair, "the node is unreachable")
	e.waitDisrupted(t, "spot-only", 1)
}

// Three of a pool's ten nodes go KernelReady=False at once: the pool's
// cap (20% of ten: two) lets two repairs start, and the third node gets
// NodeRepairBlocked (on the Node and the NodePool) before its own repair,
// which follows once the first ones no longer hold the cap.
func TestRepairStopsAtThePoolsCap(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, repairTuning)
	e.apply(t, readManifests(t, "testdata/repair-cap.yaml"))
	waitFor(t, 4*time.Minute, "ten spread replicas Running", func() bool { return len(e.runningPods(t, "spread")) == 10 })
	var nodes []string
	for _, p := range e.runningPods(t, "spread") {
		nodes = append(nodes, p.Spec.NodeName)
	}
	slices.Sort(nodes)
	broken := nodes[:3]
	for _, n := range broken {
		if _, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: n, Condition: "KernelReady"}); err != nil {
			t.Fatal(err)
		}
	}
	started := func() []string {
		var out []string
		for _, n := range broken {
			if _, err := e.tc.DescribeWorkflowExecution(e.ctx, workflows.RepairWorkflowID(n), ""); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	var blocked string
	waitFor(t, 2*time.Minute, "two repairs started and the third blocked", func() bool {
		for _, n := range broken {
			evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + n + ",reason=" + workflows.EventNodeRepairBlocked})
			if err == nil && len(evs.Items) > 0 {
				blocked = n
			}
		}
		return blocked != "" && len(started()) >= 2
	})
	first := started()
	t.Logf("broken %v; repairs started for %v when %s was blocked", broken, first, blocked)
	if slices.Contains(first, blocked) && len(first) < 3 {
		t.Errorf("the blocked node %s has a repair and another has none (%v)", blocked, first)
	}
	e.expectEvent(t, "ten", workflows.EventNodeRepairBlocked, "NodePool \"ten\"")
	e.expectEvent(t, blocked, workflows.EventNodeRepairBlocked, "blocked: 2 of the ")
	// The blocked node's turn comes; all three are replaced.
	waitFor(t, 3*time.Minute, "the three broken nodes gone and ten replicas Running", func() bool {
		for _, n := range broken {
			if _, err := e.kc.CoreV1().Nodes().Get(e.ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return len(e.runningPods(t, "spread")) == 10
	})
	// A Node goes before its NodeClaim's finalizer, which counts it.
	e.waitDisrupted(t, "ten", 3)
}

// The worker process is SIGKILLed while the repair of a GPU node waits for
// its replacement and again while it drains; the next worker resumes the
// saga: the replacement is kept (no second one), the PDB holds, the node
// and its instance go.
func TestRepairResumesAfterTheWorkerIsKilled(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	env := []string{"JOINERY_WORKER_FEATURE_GATES=NodeRepair=true", "JOINERY_WORKER_REPAIR_INTERVAL=1s",
		"JOINERY_WORKER_REPAIR_SCALE=" + strconv.FormatFloat(repairScale, 'g', -1, 64)}
	w := e.startWorker(t, env...)
	e.apply(t, readManifests(t, "testdata/repair.yaml"))
	waitFor(t, 3*time.Minute, "both trainer replicas Running", func() bool { return len(e.runningPods(t, "trainer")) == 2 })
	var nodeName string
	for _, p := range e.runningPods(t, "trainer") {
		nodeName = p.Spec.NodeName
	}
	old := map[string]bool{}
	for _, nc := range e.nodeClaims(t) {
		old[nc.GetName()] = true
	}
	sampler := sampleMinReady(func() (int, map[string]int) { return e.runningCount("trainer"), nil }, 2)
	fault, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: nodeName, Condition: "AcceleratedHardwareReady"})
	if err != nil {
		t.Fatal(err)
	}
	id := workflows.RepairWorkflowID(nodeName)
	phase := func() string {
		p, _ := queryStatus[string](e, id)
		return p
	}
	var killedIn []string
	for _, step := range []string{workflows.PhaseReplacing, workflows.PhaseDraining} {
		waitFor(t, 2*time.Minute, "phase "+step, func() bool {
			p := phase()
			return p == step || p == workflows.PhaseTerminating || p == workflows.PhaseDone
		})
		if phase() == step {
			w.kill()
			killedIn = append(killedIn, step)
			time.Sleep(2 * time.Second)
			w = e.startWorker(t, env...)
		}
	}
	var res workflows.RepairResult
	if err := e.tc.GetWorkflow(e.ctx, id, "").Get(e.ctx, &res); err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	waitFor(t, 2*time.Minute, "both trainer replicas Running again", func() bool { return len(e.runningPods(t, "trainer")) == 2 })
	sampler.Stop()
	var created []string
	for _, nc := range e.nodeClaims(t) {
		if !old[nc.GetName()] {
			created = append(created, nc.GetName())
		}
	}
	t.Logf("killed during %v; result %+v; NodeClaims created %v; fewest replicas Running %d", killedIn, res, created, sampler.Min())
	if len(killedIn) == 0 {
		t.Errorf("the worker was never killed mid-repair")
	}
	if res.Outcome != workflows.PhaseDone || len(res.Replacements) != 1 || res.ReplacementFailed != "" {
		t.Errorf("repair result %+v", res)
	}
	if len(created) != 1 {
		t.Errorf("NodeClaims created %v, want the one replacement", created)
	}
	if sampler.Min() < 1 {
		t.Errorf("fewest trainer replicas Running %d: the PodDisruptionBudget allows one away", sampler.Min())
	}
	in, _ := e.w.EC2.Instance(fault.InstanceID)
	if in.State != ec2.StateTerminated && in.State != ec2.StateShuttingDown {
		t.Errorf("instance %s is %s", fault.InstanceID, in.State)
	}
}

// An instance whose EC2 status check fails (DescribeInstanceStatus:
// impaired) while its kubelet still runs is repaired as a node condition
// would be: replacement first, then the drain, then the instance goes.
func TestRepairReplacesAnInstanceWithFailedStatusChecks(t *testing.T) {
	e, nodeName := startSteadyRepairEnv(t)
	fault, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: nodeName, Kind: world.FaultImpaired})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the impaired instance terminated", func() bool {
		in, ok := e.w.EC2.Instance(fault.InstanceID)
		return !ok || in.State == ec2.StateTerminated
	})
	var res workflows.RepairResult
	if err := e.tc.GetWorkflow(e.ctx, workflows.RepairWorkflowID(nodeName), "").Get(e.ctx, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("instance %s of %s impaired; repair %+v", fault.InstanceID, nodeName, res)
	if res.Outcome != workflows.PhaseDone || len(res.Replacements) != 1 || res.Evicted < 1 {
		t.Errorf("repair result %+v, want a replacement and the drain", res)
	}
	e.expectEvent(t, nodeName, workflows.EventNodeRepair, "EC2InstanceStatus=impaired")
	waitFor(t, 2*time.Minute, "the ReplicaSet pod Running elsewhere", func() bool {
		for _, p := range e.runningPods(t, "steady") {
			return p.Spec.NodeName != nodeName
		}
		return false
	})
}

// startSteadyRepairEnv starts a world tuned for repair with the
// interruption manifests applied, and returns it with the node its
// ReplicaSet pod ("steady") runs on.
func startSteadyRepairEnv(t *testing.T) (*env, string) {
	t.Helper()
	parallel(t)
	e := startEnvWith(t, true, repairTuning)
	e.apply(t, readManifests(t, "testdata/interruption.yaml"))
	waitFor(t, 3*time.Minute, "the ReplicaSet pod Running", func() bool { return len(e.runningPods(t, "steady")) == 1 })
	var nodeName string
	for _, p := range e.runningPods(t, "steady") {
		nodeName = p.Spec.NodeName
	}
	return e, nodeName
}

// waitDisrupted waits (a minute at most) for
// karpenter_nodeclaims_disrupted_total{reason=unhealthy} of the pool to
// reach want, and fails if it is not exactly want then.
func (e *env) waitDisrupted(t *testing.T, pool string, want float64) {
	t.Helper()
	var got float64
	deadline := time.Now().Add(time.Minute)
	for {
		got = sumOf(scrapeFamilies(t, e.addr(repairMetricsAddr)), "karpenter_nodeclaims_disrupted_total",
			map[string]string{"reason": "unhealthy", "nodepool": pool})
		if got >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if got != want {
		t.Errorf("karpenter_nodeclaims_disrupted_total{reason=unhealthy,nodepool=%s} = %v, want %v", pool, got, want)
	}
}
