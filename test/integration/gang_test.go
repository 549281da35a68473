//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/api/provreq"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

// applyGang applies examples/nodepools.yaml's EC2NodeClass and gpu
// NodePool, then examples/gang.yaml (the PodTemplate, the
// ProvisioningRequest "training" for 4 pods, the 4 consuming pods).
func applyGang(t *testing.T, e *env) {
	t.Helper()
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/gang.yaml")
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "NodePool" || o.GetName() == "gpu" {
			keep = append(keep, o)
		}
	}
	e.apply(t, keep)
}

// provReq reads the ProvisioningRequest default/training (nil on error).
func provReq(e *env) *provreq.ProvisioningRequest {
	u, err := dynamic.NewForConfigOrDie(e.w.Kube.RESTConfig()).Resource(provreq.ProvisioningRequestGVR).Namespace("default").
		Get(e.ctx, "training", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	pr := &provreq.ProvisioningRequest{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pr) != nil {
		return nil
	}
	return pr
}

// liveInstances are the EC2 instances pending or running.
func liveInstances(e *env) []ec2.Instance {
	var out []ec2.Instance
	for _, in := range e.w.EC2.Instances() {
		if in.State == ec2.StatePending || in.State == ec2.StateRunning {
			out = append(out, in)
		}
	}
	return out
}

// gangClaims are the NodeClaims a try of the request launched.
func gangClaims(t *testing.T, e *env) []metav1.Object {
	var out []metav1.Object
	for _, nc := range e.nodeClaims(t) {
		if nc.GetLabels()[activities.LabelProvisioningRequest] == "default.training" {
			out = append(out, nc)
		}
	}
	return out
}

// waitTryFailed waits for a try to report insufficient capacity
// (Provisioned=False) and returns the request then.
func waitTryFailed(t *testing.T, e *env, within time.Duration) *provreq.ProvisioningRequest {
	t.Helper()
	var pr *provreq.ProvisioningRequest
	waitFor(t, within, "a try to fail with insufficient capacity", func() bool {
		pr = provReq(e)
		c := pr.Condition(provreq.Provisioned)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == gang.ReasonInsufficient
	})
	return pr
}

// checkNothingLeft: after a failed try, no instance is pending or
// running, no NodeClaim of the gang is left, and the 4 consuming pods are
// pending with a ProvisioningFailed Event naming insufficient capacity.
func checkNothingLeft(t *testing.T, e *env, pr *provreq.ProvisioningRequest) {
	t.Helper()
	c := pr.Condition(provreq.Provisioned)
	t.Logf("Provisioned=False %s: %s (details %v)", c.Reason, c.Message, pr.Status.ProvisioningClassDetails)
	if !strings.Contains(c.Message, "insufficient capacity") || !strings.Contains(c.Message, "terminated") {
		t.Errorf("Provisioned message %q does not say why and that the nodes went", c.Message)
	}
	// The try fails once its NodeClaims are deleted; an instance whose
	// NodeClaim learned of it only after a worker restart may still be
	// shutting down then.
	failedAt := time.Now()
	for live := liveInstances(e); len(live) != 0; live = liveInstances(e) {
		if time.Since(failedAt) > time.Minute {
			t.Fatalf("%d instances left running a minute after the failed try: %+v", len(live), live)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("no instance left %s after the try failed", time.Since(failedAt).Round(100*time.Millisecond))
	waitFor(t, time.Minute, "no NodeClaim of the gang", func() bool { return len(gangClaims(t, e)) == 0 })
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=trainer"})
	if err != nil || len(pods.Items) != 4 {
		t.Fatalf("trainer pods: %v %v", len(pods.Items), err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s bound to %s while the gang failed", p.Name, p.Spec.NodeName)
		}
	}
	waitFor(t, 30*time.Second, "a ProvisioningFailed Event on each trainer pod", func() bool {
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=ProvisioningFailed"})
		if err != nil {
			return false
		}
		on := map[string]bool{}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == "Pod" && strings.Contains(ev.Message, "insufficient capacity") {
				on[ev.InvolvedObject.Name] = true
			}
		}
		return len(on) == 4
	})
}

// TestGangAllOrNothing: the EC2 endpoint can supply only 3 on-demand
// instances (every GPU offering the gang could use); a ProvisioningRequest
// for 4 one-GPU pods on separate nodes in one zone launches its nodes,
// finds the fourth without capacity, terminates all of them and says so
// (Provisioned=False InsufficientCapacity, Events on the 4 pending pods).
// With the capacity back the next try provisions all 4 in one zone and
// the pods run there; each try is its own gang/default/training/<uid>/<n>
// workflow with its NodeClaim children.
func TestGangAllOrNothing(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := startEnvWith(t, false)
	e.w.EC2.SetPoolCapacity("", "", "on-demand", 3)
	e.runControllerLogged(t, func(c *controller.Config) { c.GangDeadline, c.MetricsAddr = 3*time.Minute, metricsAddr })
	applyGang(t, e)

	pr := waitTryFailed(t, e, 2*time.Minute)
	launched := len(e.w.EC2.Instances())
	if launched == 0 || launched > 3 {
		t.Errorf("the failed try launched %d instances, want 1 to 3 (the capacity)", launched)
	}
	checkNothingLeft(t, e, pr)
	failedAt := time.Now()
	t.Logf("try 1 failed and compensated %s after start (%d instances had launched)", failedAt.Sub(start).Round(time.Second), launched)
	// The try that compensated (an earlier one may have found the
	// EC2NodeClass not Ready yet and launched nothing).
	var failedTry int
	if _, err := fmt.Sscan(pr.Status.ProvisioningClassDetails[provreq.DetailTry], &failedTry); err != nil {
		t.Fatalf("details %v: no try number", pr.Status.ProvisioningClassDetails)
	}

	e.w.EC2.SetPoolCapacity("", "", "on-demand", -1)
	waitFor(t, 3*time.Minute, "Provisioned=True", func() bool {
		pr = provReq(e)
		return pr != nil && pr.Is(provreq.Provisioned)
	})
	t.Logf("provisioned %s after the capacity came back: %s", time.Since(failedAt).Round(time.Second), pr.Condition(provreq.Provisioned).Message)
	var last int
	if _, err := fmt.Sscan(pr.Status.ProvisioningClassDetails[provreq.DetailTry], &last); err != nil || last <= failedTry {
		t.Fatalf("details %v: want a try after the failed one", pr.Status.ProvisioningClassDetails)
	}
	for try := 1; try <= last; try++ {
		id := workflows.GangWorkflowID("default", "training", string(pr.UID), try)
		d, err := e.tc.DescribeWorkflowExecution(e.ctx, id, "")
		if err != nil {
			t.Fatalf("try %d: no workflow %s: %v", try, id, err)
		}
		st := d.WorkflowExecutionInfo.Status
		t.Logf("%s: %s", id, st)
		if try < last && st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Errorf("%s: %s, want completed (failed, compensated, next try started)", id, st)
		}
		if try == last && st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("%s: %s, want running (booking)", id, st)
		}
		var gs workflows.GangStatus
		if v, err := e.tc.QueryWorkflow(e.ctx, id, "", workflows.QueryStatus); err == nil && v.Get(&gs) == nil {
			t.Logf("  phase %s, nodeclaims %v, failure %q, offerings %v", gs.Phase, gs.NodeClaims, gs.Failure, gs.Offerings)
			if try == last && (gs.Phase != workflows.PhaseBooked || len(gs.NodeClaims) != 4) {
				t.Errorf("last try: phase %s with %d NodeClaims, want Booked with 4", gs.Phase, len(gs.NodeClaims))
			}
		}
	}
	// The 4 nodes: Ready, one zone, and the pods run on them, one each.
	zones := map[string]int{}
	waitFor(t, 2*time.Minute, "the 4 trainer pods on 4 nodes of one zone", func() bool {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=trainer"})
		if err != nil {
			return false
		}
		nodes := map[string]bool{}
		clear(zones)
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
				return false
			}
			nodes[p.Spec.NodeName] = true
			n, err := e.kc.CoreV1().Nodes().Get(e.ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return false
			}
			zones[n.Labels[corev1.LabelTopologyZone]]++
		}
		return len(pods.Items) == 4 && len(nodes) == 4
	})
	if len(zones) != 1 {
		t.Errorf("gang spread over zones %v, want one", zones)
	}
	if live := liveInstances(e); len(live) != 4 {
		t.Errorf("%d instances running, want the gang's 4", len(live))
	}
	failedTries := scrapeAt(t, e.addr(metricsAddr), `joinery_gang_tries_total{outcome="failed",reason="InsufficientCapacity"}`)
	provisioned := scrapeAt(t, e.addr(metricsAddr), `joinery_gang_tries_total{outcome="provisioned",reason="Provisioned"}`)
	if failedTries < 1 || provisioned != 1 {
		t.Errorf("joinery_gang_tries_total: failed %v, provisioned %v; want >= 1 and 1", failedTries, provisioned)
	}
	t.Logf("gang running in %v; test %s", zones, time.Since(start).Round(time.Second))
	recordHistoryAs(t, e, workflows.GangWorkflowID("default", "training", string(pr.UID), failedTry), "gang")
}

// TestGangWorkerKilledMidLaunch: the worker is SIGKILLed while a try's
// nodes launch (3 of 4 can be had); the next worker finishes the try all
// or nothing: every instance terminated, no NodeClaim left, the pods
// pending with the reason.
func TestGangWorkerKilledMidLaunch(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := startEnvWith(t, false)
	e.w.EC2.SetPoolCapacity("", "", "on-demand", 3)
	w := e.startWorker(t)
	applyGang(t, e)
	waitFor(t, 2*time.Minute, "a gang instance launched", func() bool { return len(e.w.EC2.Instances()) > 0 })
	if pr := provReq(e); pr != nil && pr.Condition(provreq.Provisioned) != nil && pr.Condition(provreq.Provisioned).Reason != gang.ReasonProvisioning {
		t.Fatalf("the try was over before the kill: %+v", pr.Condition(provreq.Provisioned))
	}
	w.kill()
	t.Logf("worker SIGKILLed with %d instance(s) launched, %s after start", len(e.w.EC2.Instances()), time.Since(start).Round(time.Second))
	time.Sleep(2 * time.Second)
	w = e.startWorker(t)
	pr := waitTryFailed(t, e, 3*time.Minute)
	checkNothingLeft(t, e, pr)
	w.kill()
	t.Logf("all or nothing after the kill: %d instances had launched, none left; test %s", len(e.w.EC2.Instances()), time.Since(start).Round(time.Second))
}
