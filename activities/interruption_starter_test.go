package activities

import (
	"context"
	"testing"

	"github.com/joinery/joinery/workflows"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
)

// With payload encryption on, the Interruption workflow is named by the
// instance id's pseudonym, is Private, and carries no InstanceID search
// attribute (search attributes and ids are stored in clear).
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
		if err := s.StartInterruption(context.Background(), workflows.InterruptionInput{EventID: "ev1", InstanceID: "i-0abc"}); err != nil {
			t.Fatal(err)
		}
		_, hasID := opts.TypedSearchAttributes.GetKeyword(workflows.SAInstanceID)
		if private {
			if opts.ID != "interruption/p-of-i-0abc/ev1" || !in.Private || hasID {
				t.Errorf("private: id %s, input private %v, InstanceID search attribute %v", opts.ID, in.Private, hasID)
			}
		} else if opts.ID != "interruption/i-0abc/ev1" || in.Private || !hasID {
			t.Errorf("clear: id %s, input private %v, InstanceID search attribute %v", opts.ID, in.Private, hasID)
		}
	}
}
