package workflows

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeCloud records what the NodeClaim saga asked of its activities.
type fakeCloud struct {
	iceTypes    map[string]bool // instance types without capacity
	launches    []LaunchRequest
	terminated  []string
	deleted     []string
	events      []string
	nodeErr     error
	markErr     error                                 // MarkLaunched's answer
	launchFn    func(LaunchRequest) (Instance, error) // overrides iceTypes when set
	markedReady bool
}

func (f *fakeCloud) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(_ context.Context, r LaunchRequest) (Instance, error) {
		f.launches = append(f.launches, r)
		if f.launchFn != nil {
			return f.launchFn(r)
		}
		var failed []saga.Offering
		for _, o := range r.Offerings {
			if !f.iceTypes[o.InstanceType] {
				return Instance{ID: "i-1", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price}, nil
			}
			failed = append(failed, o)
		}
		return Instance{}, temporal.NewNonRetryableApplicationError("no capacity", ErrInsufficientCapacity, nil, failed)
	}, activity.RegisterOptions{Name: ActivityLaunchInstance})
	env.RegisterActivityWithOptions(func(context.Context, NodeClaimLaunched) error { return f.markErr }, activity.RegisterOptions{Name: ActivityMarkLaunched})
	env.RegisterActivityWithOptions(func(_ context.Context, l NodeClaimLaunched) (NodeReady, error) {
		if f.nodeErr != nil {
			return NodeReady{}, f.nodeErr
		}
		f.markedReady = true
		return NodeReady{NodeName: "ip-10-0-0-1.ec2.internal"}, nil
	}, activity.RegisterOptions{Name: ActivityWaitForNode})
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
		f.terminated = append(f.terminated, r.InstanceID)
		return nil
	}, activity.RegisterOptions{Name: ActivityTerminateInstance})
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
		f.deleted = append(f.deleted, r.NodeClaim)
		return nil
	}, activity.RegisterOptions{Name: ActivityDeleteNodeClaim})
	env.RegisterActivityWithOptions(func(_ context.Context, e EventRequest) error {
		f.events = append(f.events, e.Reason)
		return nil
	}, activity.RegisterOptions{Name: ActivityRecordEvent})
}

// recordSearchAttributes collects every upserted keyword, last value wins.
func recordSearchAttributes(env *testsuite.TestWorkflowEnvironment) map[string]string {
	got := map[string]string{}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		for k, v := range sa.GetUntypedValues() {
			if s, ok := v.(string); ok {
				got[k.GetName()] = s
			}
		}
	})
	return got
}

func offerings() []saga.Offering {
	return []saga.Offering{
		{InstanceType: "m6i.large", Zone: "us-east-1a", CapacityType: "spot", Price: 0.04},
		{InstanceType: "m6a.large", Zone: "us-east-1b", CapacityType: "spot", Price: 0.05},
		{InstanceType: "m6i.large", Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.096},
	}
}

// runGeneralPurposeClaim runs the saga of NodeClaim general-purpose-abc12
// over offerings() to its end and returns its final status; a workflow
// error fails the test.
func runGeneralPurposeClaim(t *testing.T, env *testsuite.TestWorkflowEnvironment) NodeClaimStatus {
	t.Helper()
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "general-purpose-abc12", NodePool: "general-purpose", Offerings: offerings()})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st NodeClaimStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestNodeClaimFallsBackOnInsufficientCapacityAndTerminatesOnSignal(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{iceTypes: map[string]bool{"m6i.large": true}}
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	sa := recordSearchAttributes(env)
	var phaseWhenServing string
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		var st NodeClaimStatus
		_ = v.Get(&st)
		phaseWhenServing = st.Phase
		env.SignalWorkflow(SignalTerminate, "test")
	}, time.Minute)
	st := runGeneralPurposeClaim(t, env)
	// First CreateFleet: both spot offerings; m6i ICE'd, m6a launched in the same call.
	if len(f.launches) != 1 || len(f.launches[0].Offerings) != 2 || f.launches[0].CapacityType != "spot" {
		t.Fatalf("launches = %+v", f.launches)
	}
	if st.Instance.InstanceType != "m6a.large" || st.Phase != PhaseTerminated || phaseWhenServing != PhaseReady {
		t.Fatalf("status = %+v, serving phase %q", st, phaseWhenServing)
	}
	if len(f.terminated) != 1 || f.terminated[0] != "i-1" {
		t.Fatalf("terminated = %v", f.terminated)
	}
	if sa["InstanceType"] != "m6a.large" || sa["NodeName"] != "ip-10-0-0-1.ec2.internal" ||
		sa["Phase"] != PhaseTerminated || sa["NodePool"] != "general-purpose" || sa["InstanceID"] != "i-1" {
		t.Errorf("search attributes = %v", sa)
	}
}

func TestNodeClaimMovesToOnDemandWhenAllSpotIsInsufficient(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{iceTypes: map[string]bool{"m6a.large": true}}
	// m6i spot is ICE too, but on-demand m6i isn't: key ICE by type+capacity.
	f.iceTypes["m6i.large"] = true
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	// Override: on-demand always has capacity.
	f.launchFn = func(r LaunchRequest) (Instance, error) {
		if r.CapacityType == "spot" {
			return Instance{}, temporal.NewNonRetryableApplicationError("no capacity", ErrInsufficientCapacity, nil, r.Offerings)
		}
		o := r.Offerings[0]
		return Instance{ID: "i-2", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType}, nil
	}
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalTerminate, "test") }, time.Minute)
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "x", NodePool: "p", Offerings: offerings()})
	var st NodeClaimStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if len(f.launches) != 2 || f.launches[1].CapacityType != "on-demand" || st.Instance.CapacityType != "on-demand" || st.LaunchTries != 2 {
		t.Fatalf("launches=%+v status=%+v", f.launches, st)
	}
	if len(f.events) != 1 || f.events[0] != "InsufficientCapacity" {
		t.Fatalf("events = %v", f.events)
	}
}

func TestNodeClaimTerminatesInstanceThatNeverRegisters(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{nodeErr: temporal.NewNonRetryableApplicationError("timeout", "Timeout", errors.New("never registered"))}
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	sa := recordSearchAttributes(env)
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "x", NodePool: "p", Offerings: offerings(), RegistrationTTL: time.Minute})
	err := env.GetWorkflowError()
	if err == nil {
		t.Fatal("expected the saga to fail")
	}
	if len(f.terminated) != 1 || f.terminated[0] != "i-1" {
		t.Fatalf("compensation must terminate the instance, terminated = %v", f.terminated)
	}
	if sa["Phase"] != PhaseFailed {
		t.Errorf("Phase = %q, want Failed", sa["Phase"])
	}
	if !reflect.DeepEqual(f.events, []string{"RegistrationTimeout"}) {
		t.Errorf("events %v, want [RegistrationTimeout]", f.events)
	}
}

// A launch that cannot be recorded on the NodeClaim is not a registration
// timeout: the instance is terminated under its own reason.
func TestNodeClaimTerminatesInstanceWhoseLaunchCannotBeRecorded(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{markErr: temporal.NewNonRetryableApplicationError("forbidden", "Forbidden", nil)}
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "x", NodePool: "p", Offerings: offerings()})
	if env.GetWorkflowError() == nil {
		t.Fatal("expected the saga to fail")
	}
	if !reflect.DeepEqual(f.terminated, []string{"i-1"}) || f.markedReady {
		t.Errorf("terminated %v, waited for the node %v", f.terminated, f.markedReady)
	}
	if !reflect.DeepEqual(f.events, []string{"LaunchRecordFailed"}) {
		t.Errorf("events %v, want [LaunchRecordFailed]", f.events)
	}
}

func TestNodeClaimFailsAndReleasesPodsWhenNoOfferingHasCapacity(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{iceTypes: map[string]bool{"m6i.large": true, "m6a.large": true}}
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	f.launchFn = func(r LaunchRequest) (Instance, error) {
		return Instance{}, temporal.NewNonRetryableApplicationError("no capacity", ErrInsufficientCapacity, nil, r.Offerings)
	}
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "x", NodePool: "p", Offerings: offerings()})
	if env.GetWorkflowError() == nil {
		t.Fatal("expected failure")
	}
	if len(f.launches) != 2 || len(f.deleted) != 1 || len(f.terminated) != 0 {
		t.Fatalf("launches=%d deleted=%v terminated=%v", len(f.launches), f.deleted, f.terminated)
	}
}

// A launch whose attempts keep failing (workers dying mid-call) is retried
// for the whole window, not for a count of attempts. (The test environment
// caps unlimited attempts at 10, so the policy itself is checked.)
func TestLaunchCallRetriesForAWindowNotACount(t *testing.T) {
	o := launchCall()
	if o.RetryPolicy.MaximumAttempts != 0 || o.ScheduleToCloseTimeout != launchRetryWindow || o.HeartbeatTimeout != heartbeat {
		t.Errorf("launchCall: attempts %d, schedule-to-close %s, heartbeat %s", o.RetryPolicy.MaximumAttempts, o.ScheduleToCloseTimeout, o.HeartbeatTimeout)
	}
	for _, typ := range []string{ErrInsufficientCapacity, ErrNodeClaimGone} {
		if !slices.Contains(o.RetryPolicy.NonRetryableErrorTypes, typ) {
			t.Errorf("%s must not be retried", typ)
		}
	}
}
