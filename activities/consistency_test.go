package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testclock"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simiam "github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ec2Window is the local EC2's read-after-write window in these tests;
// joineryWindow the one Joinery allows for.
const (
	ec2Window     = 3 * time.Second
	joineryWindow = 30 * time.Second
)

// driveClock steps the fake clock a second whenever something waits on
// it, until the returned stop is called.
func driveClock(clk *clocktesting.FakeClock) (stop func()) {
	return testclock.Drive(clk, 100*time.Microsecond)
}

// consistentLaunchWorld is launchWorld over an EC2 with a read-after-write
// window, the endpoint and Joinery on one fake clock.
func consistentLaunchWorld(t *testing.T, seed uint64, so simec2.Options) (*Activities, *simec2.Server, workflows.LaunchRequest, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	if so.Consistency == 0 {
		so.Consistency = ec2Window
	}
	so.Now, so.Seed, so.BootDelay, so.TerminateDelay = clk.Now, seed, -1, -1
	a, srv, req := launchWorldOpts(t, so, aws.Options{Clock: clk, ConsistencyWindow: joineryWindow}, nil, func(*Deps) {})
	return a, srv, req, clk
}

// launchDriven is launchAttempt with the fake clock stepped whenever the
// attempt waits on it.
func launchDriven(t *testing.T, a *Activities, srv *simec2.Server, req workflows.LaunchRequest, progress *launchProgress,
	clk *clocktesting.FakeClock) (workflows.Instance, *launchProgress, map[string]int, error) {
	t.Helper()
	stop := driveClock(clk)
	defer stop()
	return launchAttempt(t, a, srv, req, progress)
}

// runActivity runs one activity to its end and decodes its result into out (nil: none).
func runActivity(t *testing.T, fn any, name string, in any, out any) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	v, err := env.ExecuteActivity(name, in)
	if err == nil && out != nil {
		err = v.Get(out)
	}
	return err
}

// A NodeClaim deleted within EC2's consistency window after its launch: its
// termination meets TerminateInstances answering InvalidInstanceID.NotFound
// for the instance that runs, and must not take that for "terminated".
// Fifty runs, each instance with its own delay (seeded), on a fake clock:
// no instance is left running.
func TestNodeClaimDeletedWithinTheWindowLeavesNoInstance(t *testing.T) {
	for run := range 50 {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			t.Parallel()
			a, srv, req, clk := consistentLaunchWorld(t, uint64(run+1), simec2.Options{})
			inst, _, _, err := launchDriven(t, a, srv, req, nil, clk) // waits for its new template
			if err != nil {
				t.Fatal(err)
			}
			srv.SetRecording(true)
			if err := runActivity(t, a.Lifecycle.MarkNodeClaimLaunched, workflows.ActivityMarkLaunched,
				workflows.NodeClaimLaunched{NodeClaim: req.NodeClaim, Instance: inst}, nil); err != nil {
				t.Fatal(err)
			}
			var plan workflows.TerminationPlan
			if err := runActivity(t, a.Lifecycle.BeginTermination, workflows.ActivityBeginTermination,
				workflows.TerminationRequest{NodeClaim: req.NodeClaim, InstanceID: inst.ID, Reason: "deleted"}, &plan); err != nil {
				t.Fatal(err)
			}
			stop := driveClock(clk)
			err = runActivity(t, a.Lifecycle.TerminateInstance, workflows.ActivityTerminateInstance,
				workflows.TerminateRequest{NodeClaim: req.NodeClaim, InstanceID: plan.InstanceID, Reason: "deleted", InstanceOnly: true}, nil)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			terminates := 0
			for _, r := range srv.Requests() {
				if r.Action == "TerminateInstances" {
					terminates++
				}
			}
			got, _ := srv.Instance(inst.ID)
			if plan.InstanceID != inst.ID || terminates < 2 || got.State != simec2.StateTerminated {
				t.Fatalf("instance %s (plan %q) is %s after %d TerminateInstances", inst.ID, plan.InstanceID, got.State, terminates)
			}
		})
	}
}

// An attempt whose plan differs from the one an earlier, lost attempt sent
// with the same client token gets IdempotentParameterMismatch, not a second
// instance: it waits for EC2 to show the first one, and uses it.
func TestLaunchWithALostPlanUsesTheEarlierInstance(t *testing.T) {
	a, srv, req, clk := consistentLaunchWorld(t, 1, simec2.Options{})
	first, details, _, err := launchDriven(t, a, srv, req, nil, clk)
	if err != nil {
		t.Fatal(err)
	}
	other := *details.Plan
	other.Configs = append([]aws.LaunchConfig(nil), other.Configs...)
	other.Configs[0].Overrides = append([]aws.LaunchOverride{{InstanceType: "m5.xlarge", SubnetID: other.Subnet[req.Offerings[0].Zone],
		Zone: req.Offerings[0].Zone}}, other.Configs[0].Overrides...)
	changed := launchProgress{Plan: &other}
	_, progress, _, err := launchAttempt(t, a, srv, req, &changed)
	if err == nil || !strings.Contains(err.Error(), "waiting up to") {
		t.Fatalf("within the window: %v, want a wait for the earlier instance", err)
	}
	clk.Step(ec2Window)
	again, _, _, err := launchAttempt(t, a, srv, req, progress)
	if err != nil || again.ID != first.ID || len(srv.Instances()) != 1 {
		t.Fatalf("after the window: %+v %v, want %s and one instance (have %d)", again, err, first.ID, len(srv.Instances()))
	}
}

// A token whose fleet launched nothing (its refusal's record lost) is
// given up once the window has passed with no instance: a new token launches.
func TestLaunchPastTheWindowTakesANewToken(t *testing.T) {
	a, srv, req, clk := consistentLaunchWorld(t, 2, simec2.Options{})
	srv.SetInsufficientCapacity("m5.large", "", "", true)
	if _, _, _, err := launchDriven(t, a, srv, req, nil, clk); err == nil || !strings.Contains(err.Error(), "insufficient capacity") {
		t.Fatalf("no capacity: %v", err)
	}
	srv.SetInsufficientCapacity("m5.large", "", "", false)
	nc, _ := a.cluster().NodeClaim(context.Background(), req.NodeClaim)
	cls, _ := a.cluster().NodeClass("default")
	lp, err := a.Launch.planLaunch(context.Background(), nc, cls, req, resumeLaunch(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	// Another plan under the spent token (the record of its spending lost).
	lp.Configs[0].Overrides = append(lp.Configs[0].Overrides, aws.LaunchOverride{InstanceType: "m5.xlarge",
		SubnetID: lp.Subnet[req.Offerings[0].Zone], Zone: req.Offerings[0].Zone})
	lost := launchProgress{Plan: &lp, Unseen: clk.Now().Add(-joineryWindow)}
	inst, progress, _, err := launchAttempt(t, a, srv, req, &lost)
	if err != nil || inst.ID == "" || progress.Spent != 1 {
		t.Fatalf("past the window: %+v %v (progress %+v)", inst, err, progress)
	}
}

// A launch template made a moment ago, not visible to CreateFleet yet: the
// attempt waits for it (a few seconds) and launches. One EC2 shows later
// than that fails the attempt, which keeps its plan for the next one.
func TestLaunchTemplateNotVisibleYet(t *testing.T) {
	a, srv, req, clk := consistentLaunchWorld(t, 3, simec2.Options{})
	inst, _, calls, err := launchDriven(t, a, srv, req, nil, clk)
	if err != nil || inst.ID == "" || calls["CreateFleet"] < 2 || calls["CreateLaunchTemplate"] != 1 {
		t.Fatalf("within the attempt: %+v %v (EC2 calls %v)", inst, err, calls)
	}

	a, srv, req, clk = consistentLaunchWorld(t, 4, simec2.Options{Consistency: 3 * templateWait})
	_, progress, _, err := launchDriven(t, a, srv, req, nil, clk)
	if err == nil || !strings.Contains(err.Error(), "is not visible to EC2 yet") || progress == nil || progress.Plan == nil {
		t.Fatalf("a template slower than the attempt: %v (progress %+v)", err, progress)
	}
	clk.Step(3 * templateWait)
	inst, _, calls, err = launchAttempt(t, a, srv, req, progress)
	if err != nil || inst.ID == "" || calls["CreateFleet"] != 1 || calls["CreateLaunchTemplate"] != 0 {
		t.Fatalf("next attempt: %+v %v (EC2 calls %v)", inst, err, calls)
	}
}

// A new instance profile EC2 does not know yet: the launch is refused, no
// offering is marked unavailable, the NodeClaim says why, and once the
// profile has propagated the next attempt launches (a new client token:
// EC2 would give the refusal back for the first).
func TestLaunchWaitsForTheInstanceProfile(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	iam := simiam.New(simiam.Options{Propagation: 10 * time.Second, Now: clk.Now})
	iam.AddRole("node")
	ice := aws.NewICECache(0, clk.Now)
	a, srv, req := launchWorldOpts(t, simec2.Options{BootDelay: -1, InstanceProfile: iam.InstanceProfileARN, InstanceProfileHasRole: iam.InstanceProfileHasRole},
		aws.Options{Clock: clk, ICECache: ice}, nil, func(d *Deps) { d.ICE = ice })
	cls, _ := a.cluster().NodeClass("default")
	if err := createProfile(iam, cls.Status.InstanceProfile); err != nil {
		t.Fatal(err)
	}
	_, progress, _, err := launchAttempt(t, a, srv, req, nil)
	if err == nil || !strings.Contains(err.Error(), "does not accept instance profile") || aws.IsInsufficientCapacity(err) {
		t.Fatalf("before propagation: %v", err)
	}
	if len(ice.Entries()) != 0 {
		t.Fatalf("offerings marked unavailable: %v", ice.Entries())
	}
	nc, _ := a.cluster().NodeClaim(context.Background(), req.NodeClaim)
	if c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionLaunched); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != apiv1.ReasonInstanceProfileNotPropagated {
		t.Fatalf("Launched condition %+v", c)
	}
	clk.Step(10 * time.Second)
	inst, _, _, err := launchAttempt(t, a, srv, req, progress)
	if err != nil || inst.ID == "" {
		t.Fatalf("after propagation: %+v %v", inst, err)
	}
	if got, _ := srv.Instance(inst.ID); got.IAMInstanceProfile != cls.Status.InstanceProfile {
		t.Fatalf("instance profile %q", got.IAMInstanceProfile)
	}
}

// createProfile makes an instance profile carrying role "node" in the local IAM, over its API.
func createProfile(iam *simiam.Server, name string) error {
	url, stop, err := iam.Start("")
	if err != nil {
		return err
	}
	defer stop()
	c, err := aws.New(context.Background(), aws.Options{Endpoint: url, IAMEndpoint: url, ClusterName: "launch-test"})
	if err != nil {
		return err
	}
	if err := c.EnsureInstanceProfile(context.Background(), aws.InstanceProfile{Name: name, Role: "node"}); err != nil {
		return errors.New("instance profile: " + err.Error())
	}
	return nil
}
