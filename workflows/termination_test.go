package workflows

import (
	"context"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeEnding records the termination activities in order.
type fakeEnding struct {
	steps     []string
	drainPods int // DrainStep passes that still report pods
	deadline  time.Time
	drainReqs []DrainRequest
	volWait   []VolumeWait
	instOnly  []bool
}

func (f *fakeEnding) register(env *testsuite.TestWorkflowEnvironment, node string) {
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminationRequest) (TerminationPlan, error) {
		f.steps = append(f.steps, ActivityBeginTermination)
		return TerminationPlan{NodeName: node, InstanceID: "i-1", NodePool: "general-purpose", Deadline: f.deadline}, nil
	}, activity.RegisterOptions{Name: ActivityBeginTermination})
	env.RegisterActivityWithOptions(func(_ context.Context, r TaintRequest) error {
		f.steps = append(f.steps, ActivityTaintDisrupted)
		return nil
	}, activity.RegisterOptions{Name: ActivityTaintDisrupted})
	env.RegisterActivityWithOptions(func(_ context.Context, r DrainRequest) (DrainStatus, error) {
		f.steps = append(f.steps, ActivityDrainStep)
		f.drainReqs = append(f.drainReqs, r)
		if f.drainPods > 0 {
			f.drainPods--
			return DrainStatus{Remaining: 1, Tier: 1, Evicted: []string{"default/web-1"}, Blocked: []string{"default/web-2"}}, nil
		}
		return DrainStatus{}, nil
	}, activity.RegisterOptions{Name: ActivityDrainStep})
	env.RegisterActivityWithOptions(func(_ context.Context, r VolumeWait) (VolumeStatus, error) {
		f.steps = append(f.steps, ActivityWaitVolumesDetached)
		f.volWait = append(f.volWait, r)
		return VolumeStatus{}, nil
	}, activity.RegisterOptions{Name: ActivityWaitVolumesDetached})
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
		f.steps = append(f.steps, ActivityTerminateInstance)
		f.instOnly = append(f.instOnly, r.InstanceOnly)
		return nil
	}, activity.RegisterOptions{Name: ActivityTerminateInstance})
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
		f.steps = append(f.steps, ActivityRemoveFinalizers)
		return nil
	}, activity.RegisterOptions{Name: ActivityRemoveFinalizers})
	env.RegisterActivityWithOptions(func(_ context.Context, e EventRequest) error {
		f.steps = append(f.steps, ActivityRecordEvent+":"+e.Reason)
		return nil
	}, activity.RegisterOptions{Name: ActivityRecordEvent})
}

// A Ready node whose NodeClaim is deleted: the deleted signal runs the
// whole ending in the node's own workflow, in order, with the drain's
// deadline the NodeClaim's grace deadline and the volume wait bounded by it.
func TestNodeClaimDeletedSignalRunsTheEnding(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{}
	env.RegisterActivityWithOptions(func(_ context.Context, r LaunchRequest) (Instance, error) {
		return Instance{ID: "i-1", InstanceType: "m6i.large", Zone: "us-east-1a", CapacityType: "spot"}, nil
	}, activity.RegisterOptions{Name: ActivityLaunchInstance})
	env.RegisterActivityWithOptions(func(context.Context, NodeClaimLaunched) error { return nil }, activity.RegisterOptions{Name: ActivityMarkLaunched})
	env.RegisterActivityWithOptions(func(context.Context, NodeClaimLaunched) (NodeReady, error) {
		f.markedReady = true
		return NodeReady{NodeName: "ip-10-0-0-1.ec2.internal"}, nil
	}, activity.RegisterOptions{Name: ActivityWaitForNode})
	e := &fakeEnding{drainPods: 1}
	e.register(env, "ip-10-0-0-1.ec2.internal")
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	sa := recordSearchAttributes(env)
	env.RegisterDelayedCallback(func() {
		e.deadline = env.Now().Add(time.Hour)
		env.SignalWorkflow(SignalDeleted, DeletionNotice{Object: ObjectNodeClaim, Name: "general-purpose-abc12", NodeClaim: "general-purpose-abc12", At: env.Now()})
	}, time.Minute)
	st := runGeneralPurposeClaim(t, env)
	want := []string{ActivityBeginTermination, ActivityTaintDisrupted, ActivityDrainStep, ActivityRecordEvent + ":FailedDraining",
		ActivityDrainStep, ActivityWaitVolumesDetached, ActivityTerminateInstance, ActivityRemoveFinalizers}
	if !reflect.DeepEqual(e.steps, want) {
		t.Fatalf("steps = %v\nwant    %v", e.steps, want)
	}
	if st.Phase != PhaseTerminated || sa["Phase"] != PhaseTerminated {
		t.Errorf("phase %q, search attribute %q", st.Phase, sa["Phase"])
	}
	if !e.drainReqs[0].Deadline.Equal(e.deadline) || !e.volWait[0].Until.Equal(e.deadline) || !e.instOnly[0] {
		t.Errorf("drain deadline %v, volume wait until %v, instance only %v; want deadline %v", e.drainReqs[0].Deadline, e.volWait[0].Until, e.instOnly, e.deadline)
	}
}

// NodeClaimTermination (no NodeClaim workflow left to signal) runs the
// same ending; without a grace period the volume wait is bounded by
// MaxVolumeDetachWait.
func TestNodeClaimTerminationWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	e := &fakeEnding{}
	e.register(env, "ip-10-0-0-2.ec2.internal")
	env.RegisterWorkflowWithOptions(NodeClaimTermination, workflow.RegisterOptions{Name: NodeClaimTerminationWorkflow})
	start := env.Now()
	env.ExecuteWorkflow(NodeClaimTerminationWorkflow, TerminationRequest{NodeClaim: "general-purpose-zz9zz", Reason: "deleted"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res TerminationResult
	_ = env.GetWorkflowResult(&res)
	want := []string{ActivityBeginTermination, ActivityTaintDisrupted, ActivityDrainStep, ActivityWaitVolumesDetached, ActivityTerminateInstance, ActivityRemoveFinalizers}
	if !reflect.DeepEqual(e.steps, want) || res.NodeName != "ip-10-0-0-2.ec2.internal" || res.InstanceID != "i-1" {
		t.Fatalf("steps = %v, result %+v", e.steps, res)
	}
	if got := e.volWait[0].Until.Sub(start); got != MaxVolumeDetachWait {
		t.Errorf("volume wait bound %s, want %s", got, MaxVolumeDetachWait)
	}
}

// A NodeClaim deleted while its Node registers (version 1): the ending
// runs instead of the registration-TTL compensation; one deleted before
// launch has its finalizer removed.
func TestNodeClaimDeletedBeforeReady(t *testing.T) {
	t.Run("registering", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		f := &fakeCloud{nodeErr: temporal.NewNonRetryableApplicationError("NodeClaim deleted", ErrNodeClaimGone, nil)}
		f.register(env)
		e := &fakeEnding{}
		// fakeCloud registered TerminateInstance and RecordEvent already; the rest here.
		env.RegisterActivityWithOptions(func(_ context.Context, r TerminationRequest) (TerminationPlan, error) {
			e.steps = append(e.steps, ActivityBeginTermination)
			return TerminationPlan{InstanceID: r.InstanceID}, nil // no Node yet
		}, activity.RegisterOptions{Name: ActivityBeginTermination})
		env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
			e.steps = append(e.steps, ActivityRemoveFinalizers)
			return nil
		}, activity.RegisterOptions{Name: ActivityRemoveFinalizers})
		env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
		env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "general-purpose-abc12", NodePool: "general-purpose", Offerings: offerings()})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("workflow error: %v", err)
		}
		if !reflect.DeepEqual(e.steps, []string{ActivityBeginTermination, ActivityRemoveFinalizers}) || !reflect.DeepEqual(f.terminated, []string{"i-1"}) {
			t.Errorf("steps %v, terminated %v", e.steps, f.terminated)
		}
		for _, ev := range f.events {
			if ev == "RegistrationTimeout" {
				t.Errorf("a deleted NodeClaim reported as a registration timeout: %v", f.events)
			}
		}
	})
	t.Run("before launch", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		f := &fakeCloud{launchFn: func(LaunchRequest) (Instance, error) {
			return Instance{}, temporal.NewNonRetryableApplicationError("deleted", ErrNodeClaimGone, nil)
		}}
		f.register(env)
		released := 0
		env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
			released++
			return nil
		}, activity.RegisterOptions{Name: ActivityRemoveFinalizers})
		env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
		env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "general-purpose-abc12", NodePool: "general-purpose", Offerings: offerings()})
		var st NodeClaimStatus
		if err := env.GetWorkflowResult(&st); err != nil || st.Phase != PhaseTerminated || released != 1 || len(f.terminated) != 0 {
			t.Errorf("status %+v err %v released %d terminated %v", st, err, released, f.terminated)
		}
	})
}

// A drain told mid-way that its node goes away (an interruption's notice
// end): the sleep between passes ends at once, and every later pass has
// the notice's deadline and evicts do-not-disrupt pods too.
func TestDrainTakesANoticeEndMidway(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	e := &fakeEnding{drainPods: 20}
	e.register(env, "ip-10-0-0-3.ec2.internal")
	env.RegisterWorkflowWithOptions(NodeClaimTermination, workflow.RegisterOptions{Name: NodeClaimTerminationWorkflow})
	start := env.Now()
	end := start.Add(2 * time.Minute)
	// A pass a second (each evicts a pod); the notice comes mid-sleep.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalNoticeEnd, NoticeEnd{Deadline: end, Kind: "spot_interrupted"})
	}, 10500*time.Millisecond)
	env.ExecuteWorkflow(NodeClaimTerminationWorkflow, TerminationRequest{NodeClaim: "general-purpose-nn1nn", Reason: "deleted"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	noticed := -1
	for i, r := range e.drainReqs {
		if r.Deadline.Equal(end) != r.EvictDoNotDisrupt {
			t.Errorf("pass %d: deadline %s, evict do-not-disrupt %v", i, r.Deadline, r.EvictDoNotDisrupt)
		}
		if noticed < 0 && r.Deadline.Equal(end) {
			noticed = i
		}
	}
	if noticed != 11 {
		t.Fatalf("first pass with the notice: %d of %d, want 11", noticed, len(e.drainReqs))
	}
	if at := e.drainReqs[noticed].Now.Sub(start); at != 10500*time.Millisecond {
		t.Errorf("the noticed pass ran at %s, want 10.5s (the sleep cut short)", at)
	}
	for _, r := range e.drainReqs[noticed:] {
		if !r.Deadline.Equal(end) {
			t.Errorf("a later pass lost the notice: %+v", r)
		}
	}
}
