//go:build integration

package integration

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

const interruptionMetricsAddr = "127.0.0.1:18091"

// Field case: a spot node holding a do-not-disrupt Job pod (1 CPU) and a
// ReplicaSet pod (1 CPU) gets an interruption warning at t0 with the reclaim
// at t0+120s (the real notice): a replacement NodeClaim exists within 5 s,
// both pods are evicted before the reclaim, the node and its instance are
// gone by then, and the replacement is not in the interrupted instance
// type x zone spot pool. Then the replacement is reclaimed without a
// warning (state change to shutting-down) and is cleaned up.
func TestInterruptionSpotWarningReplacesAndDrainsWithinTheNotice(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.DisableDisruption = true // consolidation would move these pods on its own
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
		c.MetricsAddr = interruptionMetricsAddr
	})
	objs := readManifests(t, "testdata/interruption.yaml")
	e.apply(t, objs)
	running := func() map[string]corev1.Pod { // by app label
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{})
		out := map[string]corev1.Pod{}
		if err != nil {
			return out
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				out[p.Labels["app"]] = p
			}
		}
		return out
	}
	waitFor(t, 3*time.Minute, "the Job pod and the ReplicaSet pod Running", func() bool {
		r := running()
		return r["batch"].Spec.NodeName != "" && r["steady"].Spec.NodeName != ""
	})
	before := running()
	nodeName := before["batch"].Spec.NodeName
	if before["steady"].Spec.NodeName != nodeName {
		t.Fatalf("the pods landed on two nodes (%s, %s): the field case needs one", nodeName, before["steady"].Spec.NodeName)
	}
	node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	itype, zone := node.Labels[apiv1.LabelInstanceType], node.Labels[apiv1.LabelZone]
	if node.Labels[apiv1.LabelCapacityType] != "spot" {
		t.Fatalf("node %s is %s", nodeName, node.Labels[apiv1.LabelCapacityType])
	}
	ncs := e.nodeClaims(t)
	old := map[string]bool{}
	for _, nc := range ncs {
		old[nc.GetName()] = true
	}

	res, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: nodeName, Kind: world.SimSpot, Notice: world.DefaultNotice})
	if err != nil {
		t.Fatal(err)
	}
	t0, reclaim := res.SentAt, res.ReclaimAt
	t.Logf("spot warning for %s (%s, %s %s spot) at t0; reclaim at t0+%s", nodeName, res.InstanceID, itype, zone, reclaim.Sub(t0).Round(time.Millisecond))

	var replacementAt, nodeGoneAt, instanceGoneAt time.Time
	replacement := ""
	evictedAt := map[types.UID]time.Time{}
	deadline := reclaim.Add(5 * time.Second)
	for time.Now().Before(deadline) {
		now := time.Now()
		if replacement == "" {
			for _, nc := range e.nodeClaims(t) {
				if !old[nc.GetName()] {
					replacement, replacementAt = nc.GetName(), now
				}
			}
		}
		for _, p := range before {
			if _, done := evictedAt[p.UID]; done {
				continue
			}
			cur, err := e.kc.CoreV1().Pods("default").Get(e.ctx, p.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && (cur.UID != p.UID || cur.DeletionTimestamp != nil)) {
				evictedAt[p.UID] = now
			}
		}
		if nodeGoneAt.IsZero() {
			if _, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				nodeGoneAt = now
			}
		}
		if instanceGoneAt.IsZero() {
			if in, ok := e.w.EC2.Instance(res.InstanceID); ok && in.State == ec2.StateTerminated {
				instanceGoneAt = now
			}
		}
		if replacement != "" && len(evictedAt) == 2 && !nodeGoneAt.IsZero() && !instanceGoneAt.IsZero() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return "t0+" + at.Sub(t0).Round(10*time.Millisecond).String()
	}
	t.Logf("replacement NodeClaim %s at %s; pods evicted at %s (Job) and %s (ReplicaSet); node gone at %s; instance terminated at %s",
		replacement, rel(replacementAt), rel(evictedAt[before["batch"].UID]), rel(evictedAt[before["steady"].UID]), rel(nodeGoneAt), rel(instanceGoneAt))
	if replacementAt.IsZero() || replacementAt.Sub(t0) > 5*time.Second {
		t.Errorf("replacement NodeClaim at %s, want within 5 s", rel(replacementAt))
	}
	for app, p := range before {
		if at, ok := evictedAt[p.UID]; !ok || !at.Before(reclaim) {
			t.Errorf("%s pod %s evicted at %s, want before the reclaim (t0+%s)", app, p.Name, rel(at), reclaim.Sub(t0))
		}
	}
	if nodeGoneAt.IsZero() || !nodeGoneAt.Before(reclaim) {
		t.Errorf("node gone at %s, want before the reclaim", rel(nodeGoneAt))
	}
	in, _ := e.w.EC2.Instance(res.InstanceID)
	if instanceGoneAt.IsZero() || !instanceGoneAt.Before(reclaim) || in.TerminateTime.IsZero() || !in.TerminateTime.Before(reclaim) {
		t.Errorf("instance %s terminated at %s (TerminateInstances at %s), want before the reclaim", res.InstanceID, rel(instanceGoneAt), rel(in.TerminateTime))
	}

	// The replacement is bought outside the interrupted pool, still spot.
	var repl *nodeClaimInfo
	waitFor(t, time.Minute, "the replacement launched", func() bool {
		for _, nc := range e.nodeClaims(t) {
			if nc.GetName() == replacement && nc.GetLabels()[apiv1.LabelInstanceType] != "" {
				repl = &nodeClaimInfo{nc.GetLabels()[apiv1.LabelInstanceType], nc.GetLabels()[apiv1.LabelZone], nc.GetLabels()[apiv1.LabelCapacityType]}
				return true
			}
		}
		return false
	})
	t.Logf("replacement %s: %s %s %s", replacement, repl.instanceType, repl.zone, repl.capacityType)
	if repl.instanceType == itype && repl.zone == zone {
		t.Errorf("replacement %s launched in the interrupted pool %s/%s", replacement, itype, zone)
	}
	if repl.capacityType != "spot" {
		t.Errorf("replacement capacity type %s (the NodePool allows spot only)", repl.capacityType)
	}
	// Both workloads run again, on the replacement.
	waitFor(t, 2*time.Minute, "both pods Running again", func() bool {
		r := running()
		return r["batch"].UID != "" && r["batch"].UID != before["batch"].UID && r["steady"].UID != "" && r["steady"].UID != before["steady"].UID
	})

	id := workflows.InterruptionWorkflowID(res.InstanceID, saga.KindSpotInterrupted)
	var out workflows.InterruptionResult
	if err := e.tc.GetWorkflow(e.ctx, id, "").Get(e.ctx, &out); err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if out.Action != workflows.ActionCordonAndDrain || out.Outcome != workflows.PhaseDone || out.Disrupt == nil ||
		out.Disrupt.Evicted != 2 || len(out.Disrupt.Replacements) != 1 || out.Disrupt.Replacements[0] != replacement {
		t.Errorf("%s result %+v (drain %+v)", id, out, out.Disrupt)
	}

	// A redelivered message is a no-op: deleted, no second action. (The
	// world's standard queue may have delivered the first one twice
	// already.)
	received := scrape(t, e, `joinery_interruption_received_messages_total{kind="spot_interrupted"}`)
	if _, err := e.w.SQS.Send(world.InterruptionQueueName, res.Body); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the duplicate received", func() bool {
		return scrape(t, e, `joinery_interruption_received_messages_total{kind="spot_interrupted"}`) > received
	})
	waitFor(t, 10*time.Second, "the duplicate deleted", func() bool {
		v, f := e.w.SQS.Counts(world.InterruptionQueueName)
		return v == 0 && f == 0
	})
	if n := scrape(t, e, `joinery_interruption_actions_total{action="CordonAndDrain"}`); n != 1 {
		t.Errorf("CordonAndDrain actions = %v after a redelivery, want 1", n)
	}
	recordHistories(t, e, id)

	// The replacement's instance is then reclaimed without warning: the
	// state change (shutting-down) cleans up its Node and NodeClaim and the
	// pods are given capacity again.
	r2 := running()
	node2 := r2["steady"].Spec.NodeName
	gone, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: node2, Kind: world.SimTerminated})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the reclaimed node's Node and NodeClaim cleaned up", func() bool {
		_, err := e.kc.CoreV1().Nodes().Get(e.ctx, node2, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false
		}
		for _, nc := range e.nodeClaims(t) {
			if nc.GetName() == replacement {
				return false
			}
		}
		return true
	})
	t.Logf("instance %s reclaimed without notice at t1; Node %s and NodeClaim %s gone at t1+%s", gone.InstanceID, node2, replacement,
		time.Since(gone.ReclaimAt).Round(10*time.Millisecond))
	waitFor(t, 2*time.Minute, "both pods Running again after the reclaim", func() bool {
		r := running()
		return r["batch"].Spec.NodeName != "" && r["batch"].Spec.NodeName != node2 && r["steady"].Spec.NodeName != "" && r["steady"].Spec.NodeName != node2
	})
	// The standard queue may deliver any message twice: received counts
	// are at least the messages sent, actions exactly one per event.
	if n := scrape(t, e, `joinery_interruption_received_messages_total{kind="instance_terminated"}`); n < 1 {
		t.Errorf("instance_terminated messages = %v, want at least 1", n)
	}
	if n := scrape(t, e, `joinery_interruption_actions_total{action="CordonAndDrain"}`); n != 2 {
		t.Errorf("CordonAndDrain actions = %v, want 2", n)
	}
	// Karpenter's names for the same events.
	fams := scrapeFamilies(t, e.addr(interruptionMetricsAddr))
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"karpenter_interruption_actions_performed", map[string]string{"action_type": "CordonAndDrain"}, 2},
		{"karpenter_interruption_actions_performed_total", map[string]string{"action_type": "CordonAndDrain"}, 2},
	} {
		if got := sumOf(fams, c.name, c.match); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.match, got, c.want)
		}
	}
	for _, c := range []struct {
		name  string
		match map[string]string
		min   float64
	}{
		{"karpenter_interruption_received_messages_total", map[string]string{"message_type": "spot_interrupted"}, 2},
		{"karpenter_interruption_received_messages_total", map[string]string{"message_type": "instance_terminated"}, 1},
		{"karpenter_interruption_deleted_messages_total", nil, 3},
		{"karpenter_interruption_message_queue_duration_seconds", nil, 3},
		{"karpenter_nodeclaims_disrupted_total", map[string]string{"reason": "interruption", "consolidation_policy": "", "termination_mode": "graceful"}, 1},
		{"karpenter_nodeclaims_terminated_total", nil, 1},
		{"karpenter_nodes_terminated_total", nil, 1},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"method": "Delete"}, 1},
		{"karpenter_nodeclaims_created_total", map[string]string{"reason": "interruption"}, 1},
	} {
		if got := sumOf(fams, c.name, c.match); got < c.min {
			t.Errorf("%s%v = %v, want >= %v", c.name, c.match, got, c.min)
		}
	}
	checkListed(t, fams, "interruption")
}

type nodeClaimInfo struct{ instanceType, zone, capacityType string }

func (e *env) nodeClaims(t *testing.T) []metav1.Object {
	t.Helper()
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	l, err := dc.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]metav1.Object, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// scrape reads one sample from the controller's /metrics (-1 if absent).
func scrape(t *testing.T, e *env, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + e.addr(interruptionMetricsAddr) + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` ([0-9.e+]+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}
