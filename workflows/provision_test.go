package workflows

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

func TestProvisionStartsOneNodeClaimPerPlannedNode(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	plan := ProvisionPlan{
		NodeClaims: []NodeClaimInput{
			{Name: "general-purpose-aaaaa", NodePool: "general-purpose", Offerings: offerings(), Pods: 7},
			{Name: "gpu-bbbbb", NodePool: "gpu", Offerings: offerings(), Pods: 1},
		},
		PodsOnExisting: 2,
		Unschedulable:  []string{"default/huge: no instance type has cpu >= 1000"},
	}
	env.RegisterActivityWithOptions(func(context.Context, ProvisionInput) (ProvisionPlan, error) { return plan, nil },
		activity.RegisterOptions{Name: ActivityPlanProvisioning})
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	var started []string
	env.OnWorkflow(NodeClaimWorkflow, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in NodeClaimInput) (NodeClaimStatus, error) {
		started = append(started, workflow.GetInfo(ctx).WorkflowExecution.ID)
		return NodeClaimStatus{Phase: PhaseReady}, nil
	})
	env.ExecuteWorkflow(Provision, ProvisionInput{BatchID: "b1", PendingPods: 11})
	var res ProvisionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.NodeClaims) != 2 || res.NodeClaims[0] != "general-purpose-aaaaa" || res.PodsPlaced != 10 || res.Unschedulable != 1 {
		t.Fatalf("result = %+v", res)
	}
	sort.Strings(started) // the test environment runs mocked children concurrently
	if len(started) != 2 || started[0] != "nodeclaim/general-purpose-aaaaa" || started[1] != "nodeclaim/gpu-bbbbb" {
		t.Fatalf("children = %v", started)
	}
}

// A plan cut at MaxNodeClaimsPerPlan comes in rounds: each round's sagas
// start, then the workflow plans again, until a plan says no more.
func TestProvisionPlansInRounds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	rounds := []ProvisionPlan{
		{NodeClaims: []NodeClaimInput{{Name: "general-purpose-aaaaa", NodePool: "general-purpose", Offerings: offerings(), Pods: 3}},
			UnschedulableTotal: 120, Unschedulable: []string{"default/huge-1: too big"}, More: true},
		{NodeClaims: []NodeClaimInput{{Name: "general-purpose-bbbbb", NodePool: "general-purpose", Offerings: offerings(), Pods: 4}}, More: true},
		{NodeClaims: []NodeClaimInput{{Name: "general-purpose-ccccc", NodePool: "general-purpose", Offerings: offerings(), Pods: 5}}},
	}
	calls := 0
	env.RegisterActivityWithOptions(func(context.Context, ProvisionInput) (ProvisionPlan, error) {
		calls++
		return rounds[calls-1], nil
	}, activity.RegisterOptions{Name: ActivityPlanProvisioning})
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	env.OnWorkflow(NodeClaimWorkflow, mock.Anything, mock.Anything).Return(NodeClaimStatus{Phase: PhaseReady}, nil)
	env.ExecuteWorkflow(Provision, ProvisionInput{BatchID: "b2", PendingPods: 132})
	var res ProvisionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(res.NodeClaims) != 3 || res.PodsPlaced != 12 || res.Unschedulable != 120 {
		t.Fatalf("%d plans, result %+v", calls, res)
	}
}

// The recorded multi-round histories replay (TestReplayRecordedHistories);
// this checks they are what they claim: before versionPipelinedRounds the
// second plan waits for the first round's children to start, after it the
// second plan is scheduled first.
func TestRecordedRoundsPipelined(t *testing.T) {
	for _, c := range []struct {
		file      string
		pipelined bool
	}{{"provision-rounds-v0.json", false}, {"provision-rounds-v1.json", true}} {
		b, err := os.ReadFile(filepath.Join("testdata/histories", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []struct {
				EventType string `json:"eventType"`
			} `json:"events"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatal(err)
		}
		plans, secondPlan, firstStarted := 0, -1, -1
		for i, e := range h.Events {
			switch e.EventType {
			case "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
				if plans++; plans == 2 {
					secondPlan = i
				}
			case "EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED":
				if firstStarted < 0 {
					firstStarted = i
				}
			}
		}
		if plans != 3 || secondPlan < 0 || firstStarted < 0 || (secondPlan < firstStarted) != c.pipelined {
			t.Errorf("%s: %d plans, second plan scheduled at event %d, first child started at %d; pipelined want %v",
				c.file, plans, secondPlan, firstStarted, c.pipelined)
		}
	}
}
