package workflows

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// gangEnv runs Gang with PlanGang answering plans[try-1] (Done past
// them), and records the status updates and the NodeClaims deleted.
func gangEnv(t *testing.T, plans []GangPlan, ready func() error, child func(workflow.Context, NodeClaimInput) (NodeClaimStatus, error)) (*testsuite.TestWorkflowEnvironment, *[]GangStatusUpdate, *[]string) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(10 * time.Second)
	var updates []GangStatusUpdate
	var deleted []string
	env.RegisterActivityWithOptions(func(_ context.Context, in GangInput) (GangPlan, error) {
		if in.Try > len(plans) {
			return GangPlan{Done: true}, nil
		}
		return plans[in.Try-1], nil
	}, activity.RegisterOptions{Name: ActivityPlanGang})
	env.RegisterActivityWithOptions(func(ctx context.Context, _ GangWait) error {
		if ready != nil {
			return ready()
		}
		return errors.New("not every node Ready yet") // retried with backoff

	}, activity.RegisterOptions{Name: ActivityWaitGangReady})
	env.RegisterActivityWithOptions(func(_ context.Context, u GangStatusUpdate) error {
		updates = append(updates, u)
		return nil
	}, activity.RegisterOptions{Name: ActivitySetGangStatus})
	env.RegisterActivityWithOptions(func(context.Context, GangBooking) error { return nil }, activity.RegisterOptions{Name: ActivityBookGang})
	env.RegisterActivityWithOptions(func(_ context.Context, r TerminateRequest) error {
		deleted = append(deleted, r.NodeClaim)
		return nil
	}, activity.RegisterOptions{Name: ActivityDeleteNodeClaim})
	env.RegisterWorkflowWithOptions(Gang, workflow.RegisterOptions{Name: GangWorkflow})
	if child != nil {
		env.RegisterWorkflowWithOptions(child, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	}
	return env, &updates, &deleted
}

func gangPlan(names ...string) GangPlan {
	p := GangPlan{OK: true, Pods: len(names)}
	for _, n := range names {
		p.NodeClaims = append(p.NodeClaims, NodeClaimInput{Name: n, NodePool: "gpu", Offerings: offerings(), Pods: 1})
	}
	return p
}

// One NodeClaim of three finds no capacity: all three are deleted, the
// try waits until every saga has ended (the launched ones terminated),
// reports InsufficientCapacity with the offerings, and starts try 2.
func TestGangCompensatesEveryNodeOnInsufficientCapacity(t *testing.T) {
	ice := temporal.NewNonRetryableApplicationError("insufficient capacity", ErrInsufficientCapacity, nil,
		[]saga.Offering{{InstanceType: "g4dn.xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}})
	env, updates, deleted := gangEnv(t, []GangPlan{gangPlan("gpu-a", "gpu-b", "gpu-c")}, nil, func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		if in.Name == "gpu-b" {
			_ = workflow.Sleep(ctx, time.Minute) // its offerings tried
			return NodeClaimStatus{Phase: PhaseFailed}, temporal.NewNonRetryableApplicationError("launch failed", ErrNodeClaimFailed, ice)
		}
		// Launched; ends (terminated) after its deletion.
		_ = workflow.Sleep(ctx, 2*time.Minute)
		return NodeClaimStatus{Phase: PhaseTerminated, Instance: Instance{ID: "i-" + in.Name}}, nil
	})
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1, Backoff: []time.Duration{10 * time.Second}})
	var res GangResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	sort.Strings(*deleted)
	if strings.Join(*deleted, ",") != "gpu-a,gpu-b,gpu-c" {
		t.Errorf("deleted %v, want every NodeClaim of the try", *deleted)
	}
	if res.Provisioned || res.NextTry != "gang/default/training/u1/2" {
		t.Errorf("result %+v", res)
	}
	var failed *GangStatusUpdate
	for i, u := range *updates {
		if u.Outcome == GangFailed {
			failed = &(*updates)[i]
		}
	}
	if failed == nil || failed.Reason != "InsufficientCapacity" || len(failed.Offerings) != 1 || failed.Offerings[0] != "g4dn.xlarge/us-east-1a/on-demand" ||
		!strings.Contains(failed.Message, "2 had an instance, terminated") || failed.NextTry == "" {
		t.Fatalf("failure update %+v (all %+v)", failed, *updates)
	}
}

// Every node Ready: Provisioned, then the booking, then BookingExpired.
func TestGangProvisionsAndBooks(t *testing.T) {
	env, updates, deleted := gangEnv(t, []GangPlan{gangPlan("gpu-a", "gpu-b")}, func() error { return nil }, func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		_ = workflow.Sleep(ctx, 24*time.Hour) // serving
		return NodeClaimStatus{Phase: PhaseTerminated}, nil
	})
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1, Booking: 10 * time.Minute})
	var res GangResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, u := range *updates {
		outcomes = append(outcomes, u.Outcome)
	}
	if !res.Provisioned || len(*deleted) != 0 || strings.Join(outcomes, ",") != "launching,provisioned,booking-expired" {
		t.Fatalf("result %+v, deleted %v, outcomes %v", res, *deleted, outcomes)
	}
}

// A plan that leaves a pod unplaced launches nothing and tries again.
func TestGangUnplacedLaunchesNothing(t *testing.T) {
	env, updates, deleted := gangEnv(t, []GangPlan{{Pods: 4, Reason: "CapacityIsNotFound", Message: "1 of 4 pods fit nowhere"}}, nil, nil)
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1})
	var res GangResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*updates) != 1 || (*updates)[0].Outcome != GangUnplaced || len(*deleted) != 0 || res.NextTry != "gang/default/training/u1/2" {
		t.Fatalf("updates %+v, deleted %v, result %+v", *updates, *deleted, res)
	}
}

// Not every node Ready by the deadline: every NodeClaim is deleted; a saga
// that does not end is waited for at most compensationWait; the request
// hears ProvisioningDeadlineExceeded.
func TestGangDeadline(t *testing.T) {
	env, updates, deleted := gangEnv(t, []GangPlan{gangPlan("gpu-a", "gpu-b")}, nil, func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		_ = workflow.Sleep(ctx, 24*time.Hour) // never Ready, never ends
		return NodeClaimStatus{}, nil
	})
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1, Deadline: 5 * time.Minute})
	var res GangResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	sort.Strings(*deleted)
	last := (*updates)[len(*updates)-1]
	if strings.Join(*deleted, ",") != "gpu-a,gpu-b" || last.Outcome != GangFailed || last.Reason != "ProvisioningDeadlineExceeded" ||
		!strings.Contains(last.Message, "2 NodeClaim saga(s) still terminating") || res.NextTry != "gang/default/training/u1/2" {
		t.Fatalf("deleted %v, last update %+v, result %+v", *deleted, last, res)
	}
}

// A failed try with a cluster placement group deletes it once every
// saga of the try has ended (EC2 refuses while instances are in it:
// retried); a provisioned try leaves it to the garbage collector.
func TestGangDeletesItsPlacementGroupAfterItsNodes(t *testing.T) {
	ice := temporal.NewNonRetryableApplicationError("insufficient capacity", ErrInsufficientCapacity, nil)
	plan := gangPlan("gpu-a", "gpu-b")
	plan.PlacementGroup = "joinery-gang-u1-1-prod"
	ended := 0
	env, _, _ := gangEnv(t, []GangPlan{plan}, nil, func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		defer func() { ended++ }()
		if in.Name == "gpu-b" {
			return NodeClaimStatus{Phase: PhaseFailed}, temporal.NewNonRetryableApplicationError("launch failed", ErrNodeClaimFailed, ice)
		}
		_ = workflow.Sleep(ctx, 2*time.Minute) // terminating
		return NodeClaimStatus{Phase: PhaseTerminated, Instance: Instance{ID: "i-a"}}, nil
	})
	var calls []string
	env.RegisterActivityWithOptions(func(_ context.Context, name string) error {
		calls = append(calls, name)
		if len(calls) == 1 {
			return errors.New("InvalidPlacementGroup.InUse") // EC2 not caught up yet
		}
		if ended != 2 {
			t.Errorf("group deleted with %d of 2 sagas ended", ended)
		}
		return nil
	}, activity.RegisterOptions{Name: ActivityDeleteGangPlacementGroup})
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[1] != "joinery-gang-u1-1-prod" {
		t.Errorf("DeleteGangPlacementGroup calls %v, want the try's group twice (refused once)", calls)
	}

	booked := gangPlan("gpu-a")
	booked.PlacementGroup = "joinery-gang-u1-1-prod"
	env, _, _ = gangEnv(t, []GangPlan{booked}, func() error { return nil }, func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		_ = workflow.Sleep(ctx, 24*time.Hour)
		return NodeClaimStatus{Phase: PhaseTerminated}, nil
	})
	env.RegisterActivityWithOptions(func(context.Context, string) error {
		t.Error("a provisioned try deleted its group")
		return nil
	}, activity.RegisterOptions{Name: ActivityDeleteGangPlacementGroup})
	env.ExecuteWorkflow(Gang, GangInput{Namespace: "default", Name: "training", UID: "u1", Try: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}
