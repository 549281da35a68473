package activities

import (
	"context"
	"testing"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/workflows"
	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
)

// With payload encryption on, the Interruption workflow is named by the
// instance id's pseudonym, is Private, and carries no InstanceID search
// attribute (search attributes and ids are stored in clear). Either way
// it is one workflow per instance and kind, never started twice.
func TestInterruptionStarterKeepsInstanceIDsOutOfClearText(t *testing.T) {
	for _, private := range []bool{false, true} {
		c := &mocks.Client{}
		var opts client.StartWorkflowOptions
		var in workflows.InterruptionInput
		c.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.InterruptionWorkflow, mock.Anything).
			Run(func(a mock.Arguments) {
				opts = a.Get(1).(client.StartWorkflowOptions)
				in = a.Get(3).(workflows.InterruptionInput)
			}).Return(&mocks.WorkflowRun{}, nil)
		s := TemporalInterruptionStarter{Client: c}
		if private {
			s.Pseudonym = func(v string) string { return "p-of-" + v }
		}
		started, err := s.StartInterruption(context.Background(), workflows.InterruptionInput{EventID: "ev1", InstanceID: "i-0abc", Kind: saga.KindSpotInterrupted})
		if err != nil || !started {
			t.Fatalf("started %v, %v", started, err)
		}
		if opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
			t.Errorf("id policies %v %v: a running or closed workflow of the id must not be joined nor run again", opts.WorkflowIDConflictPolicy, opts.WorkflowIDReusePolicy)
		}
		_, hasID := opts.TypedSearchAttributes.GetKeyword(workflows.SAInstanceID)
		if private {
			if opts.ID != "interruption/p-of-i-0abc/spot_interrupted" || !in.Private || hasID {
				t.Errorf("private: id %s, input private %v, InstanceID search attribute %v", opts.ID, in.Private, hasID)
			}
		} else if opts.ID != "interruption/i-0abc/spot_interrupted" || in.Private || !hasID {
			t.Errorf("clear: id %s, input private %v, InstanceID search attribute %v", opts.ID, in.Private, hasID)
		}
	}
}

// A workflow id Temporal already has (running, or closed within its
// retention) is a duplicate, not an error; InterruptionStarted asks
// Temporal by id, the pseudonym's when encryption is on.
func TestInterruptionStarterDuplicatesAndLookups(t *testing.T) {
	c := &mocks.Client{}
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.InterruptionWorkflow, mock.Anything).
		Return(nil, serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""))
	c.On("DescribeWorkflowExecution", mock.Anything, "interruption/p-of-i-0abc/spot_interrupted", "").Return(nil, nil)
	c.On("DescribeWorkflowExecution", mock.Anything, "interruption/p-of-i-0abc/instance_stopped", "").Return(nil, serviceerror.NewNotFound("none"))
	s := TemporalInterruptionStarter{Client: c, Pseudonym: func(v string) string { return "p-of-" + v }}
	started, err := s.StartInterruption(context.Background(), workflows.InterruptionInput{InstanceID: "i-0abc", Kind: saga.KindSpotInterrupted})
	if started || err != nil {
		t.Errorf("an id Temporal has: started %v, %v; want a duplicate", started, err)
	}
	if ok, err := s.InterruptionStarted(context.Background(), "i-0abc", saga.KindSpotInterrupted); !ok || err != nil {
		t.Errorf("existing workflow: %v %v", ok, err)
	}
	if ok, err := s.InterruptionStarted(context.Background(), "i-0abc", saga.KindInstanceStopped); ok || err != nil {
		t.Errorf("unknown workflow: %v %v", ok, err)
	}
}
