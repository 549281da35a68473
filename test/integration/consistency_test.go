//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/sim/world"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A NodeClaim deleted the moment its launch is recorded, while EC2 does
// not show its instance yet (TerminateInstances answers
// InvalidInstanceID.NotFound for the instance that runs): its termination
// waits for EC2 to show the instance and terminates it. No instance of it
// is left running, and the pod runs on another node.
func TestNodeClaimDeletedRightAfterLaunchLeavesNoInstance(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) { o.Consistency = 8 * time.Second }, true)
	applyGCManifests(t, e)
	dc := dynamicClient(t, e)
	var claim, id string
	for end := time.Now().Add(3 * time.Minute); claim == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no NodeClaim launched within 3m")
		}
		for _, nc := range e.nodeClaimObjs(t, dc) {
			if id = gc.InstanceID(nc.Status.ProviderID); id != "" {
				claim = nc.Name
				break
			}
		}
	}
	if e.w.EC2.Visible(id) {
		t.Fatalf("instance %s of NodeClaim %s is already visible: the test did not act within EC2's window", id, claim)
	}
	e.w.EC2.SetRecording(true)
	if err := dc.Resource(apiv1.NodeClaimGVR).Delete(e.ctx, claim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("NodeClaim %s deleted while EC2 does not show its instance %s yet", claim, id)
	waitFor(t, 2*time.Minute, "the NodeClaim gone", func() bool {
		_, err := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, claim, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// Its finalizer is removed once its termination has ended the instance
	// (garbage collection would only catch a leak minutes later).
	if s := e.ec2State(id); s != "shutting-down" && s != "terminated" {
		t.Fatalf("NodeClaim %s is gone but its instance %s is %s", claim, id, s)
	}
	waitFor(t, time.Minute, "the instance terminated", func() bool { return e.ec2State(id) == "terminated" })
	for _, in := range e.w.EC2.Instances() {
		if in.Tags[apiv1.TagNodeClaim] == claim && in.State != "terminated" {
			t.Errorf("instance %s of the deleted NodeClaim %s is %s", in.ID, claim, in.State)
		}
	}
	waitFor(t, 3*time.Minute, "gc-app Running on another node", func() bool { return e.appNode() != "" })
	// On a loaded machine the termination can reach EC2 only once it shows
	// the instance: the log must say it waited only when EC2 did not.
	log, _ := os.ReadFile(filepath.Join(e.dir, "joinery.log"))
	waited := strings.Contains(string(log), "EC2 did not show the instance at first")
	if first, ok := e.firstTermination(id); !ok {
		t.Errorf("no TerminateInstances named %s", id)
	} else if at, _ := e.w.EC2.VisibleAt(id); first.Before(at) != waited {
		t.Errorf("TerminateInstances first named %s at %s, EC2 showed it from %s; the log says it waited: %v",
			id, first.Format(time.StampMilli), at.Format(time.StampMilli), waited)
	} else if !waited {
		t.Logf("the termination reached EC2 after it showed %s: the wait was not exercised", id)
	}
}

// firstTermination is when the first TerminateInstances naming id
// reached EC2 and was not throttled (recording on).
func (e *env) firstTermination(id string) (time.Time, bool) {
	for _, r := range e.w.EC2.Requests() {
		if r.Action != "TerminateInstances" || r.Throttled {
			continue
		}
		for k, v := range r.Params {
			if strings.HasPrefix(k, "InstanceId.") && len(v) > 0 && v[0] == id {
				return r.Time, true
			}
		}
	}
	return time.Time{}, false
}

// A new EC2NodeClass with spec.role: Joinery makes its instance profile,
// which EC2 refuses until the profile (and its role) have propagated. The
// first launch waits that out (Launched=False InstanceProfileNotPropagated,
// an Event), then runs the pod; no offering was marked as insufficient
// capacity and no NodeClaim failed.
func TestNewInstanceProfileIsWaitedForNotInsufficientCapacity(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) { o.ProfilePropagation = 15 * time.Second }, true)
	applyGCManifests(t, e)
	waitFor(t, 4*time.Minute, "gc-app Running", func() bool { return e.appNode() != "" })
	events := func(reason string) int {
		evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs.Items)
	}
	if n := events(apiv1.ReasonInstanceProfileNotPropagated); n == 0 {
		t.Errorf("no %s Event: the first launch did not meet the propagation delay", apiv1.ReasonInstanceProfileNotPropagated)
	}
	for _, reason := range []string{"InsufficientCapacity", "NodeClaimFailed"} {
		if n := events(reason); n != 0 {
			t.Errorf("%d %s Events, want none", n, reason)
		}
	}
	if cm, err := e.kc.CoreV1().ConfigMaps("default").Get(e.ctx, sharedstate.OfferingCacheConfigMap, metav1.GetOptions{}); err == nil {
		if marks, _ := sharedstate.DecodeOfferings(cm.Data); len(marks) != 0 {
			t.Errorf("offerings marked unavailable: %v", marks)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if n := len(e.nodeClaimObjs(t, dynamicClient(t, e))); n != 1 {
		t.Errorf("%d NodeClaims, want the first one only", n)
	}
}
