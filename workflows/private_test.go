package workflows

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// With payload encryption on (Private), no search attribute may carry a
// node name or an instance id: the server stores them in clear.
func TestPrivateNodeClaimSetsNoIdentifyingSearchAttributes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeCloud{}
	f.register(env)
	env.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	sa := recordSearchAttributes(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalTerminate, "test") }, time.Minute)
	env.ExecuteWorkflow(NodeClaimWorkflow, NodeClaimInput{Name: "general-purpose-abc12", NodePool: "general-purpose", Offerings: offerings(), Private: true})
	var st NodeClaimStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if st.Phase != PhaseTerminated || st.NodeName != "ip-10-0-0-1.ec2.internal" {
		t.Fatalf("status %+v", st)
	}
	if _, ok := sa["NodeName"]; ok {
		t.Errorf("NodeName search attribute set: %v", sa)
	}
	if _, ok := sa["InstanceID"]; ok {
		t.Errorf("InstanceID search attribute set: %v", sa)
	}
	if sa["InstanceType"] != "m6i.large" || sa["NodeClaim"] != "general-purpose-abc12" || sa["Phase"] != PhaseTerminated {
		t.Errorf("search attributes = %v", sa)
	}
}

// A private decision names its saga (and a drift's drain) by the
// pseudonyms the activity gave, and marks them private.
func TestPrivateConsolidationNamesDrainsByPseudonym(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeConsolidation{valid: saga.Validation{Valid: true}, decide: func(i int, _ time.Time) saga.DisruptionDecision {
		switch i {
		case 1:
			return saga.DisruptionDecision{Method: saga.MethodEmptiness, Reason: saga.ReasonEmpty, Nodes: []string{"ip-10-0-0-1.ec2.internal", "ip-10-0-0-2.ec2.internal"},
				NodeRefs: []string{"p-1", "p-2"}}
		case 3:
			return saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{"ip-10-0-0-3.ec2.internal"}, NodeRefs: []string{"p-3"}, Replace: true}
		}
		return saga.DisruptionDecision{}
	}}
	env.RegisterActivityWithOptions(func(_ context.Context, p DisruptionPass) (saga.DisruptionDecision, error) {
		f.decided = append(f.decided, p.Now)
		return f.decide(len(f.decided)-1, p.Now), nil
	}, activity.RegisterOptions{Name: ActivityComputeDisruption})
	env.RegisterActivityWithOptions(func(context.Context, saga.DisruptionDecision) (saga.Validation, error) { return f.valid, nil },
		activity.RegisterOptions{Name: ActivityValidateDisruption})
	env.RegisterWorkflowWithOptions(Consolidation, workflow.RegisterOptions{Name: ConsolidationWorkflow})
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	env.RegisterWorkflowWithOptions(Consolidate, workflow.RegisterOptions{Name: ConsolidateWorkflow})
	var ids []string
	var nodeNameSA []string
	child := func(ctx workflow.Context) {
		ids = append(ids, workflow.GetInfo(ctx).WorkflowExecution.ID)
		if v, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(SANodeName); ok {
			nodeNameSA = append(nodeNameSA, v)
		}
	}
	env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in DisruptInput) (DisruptResult, error) {
		child(ctx)
		f.drained = append(f.drained, in)
		return DisruptResult{Outcome: PhaseDone}, nil
	})
	env.OnWorkflow(ConsolidateWorkflow, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in ConsolidateInput) (ConsolidateResult, error) {
		child(ctx)
		f.sagas = append(f.sagas, in)
		return ConsolidateResult{Outcome: PhaseDone}, nil
	})
	runUntilContinueAsNew(t, env, ConsolidationInput{})
	sort.Strings(ids)
	if strings.Join(ids, ",") != "disrupt/drifted/p-3,disrupt/empty/p-1" {
		t.Errorf("child ids %v", ids)
	}
	if len(nodeNameSA) != 0 {
		t.Errorf("NodeName search attribute on the children: %v", nodeNameSA)
	}
	if len(f.sagas) != 1 || !f.sagas[0].Private || len(f.drained) != 1 || !f.drained[0].Private || !strings.HasPrefix(f.drained[0].NodeName, "ip-") {
		t.Errorf("sagas %+v drains %+v", f.sagas, f.drained)
	}
}

// A private interruption hands the drain the node's pseudonym as its id.
func TestPrivateInterruptionNamesTheDrainByPseudonym(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	tgt := spotTarget()
	tgt.NodeRef = "p-node"
	f := &fakeInterruption{target: tgt}
	f.register(env, false)
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	sa := recordSearchAttributes(env)
	var id string
	env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in DisruptInput) (DisruptResult, error) {
		id = workflow.GetInfo(ctx).WorkflowExecution.ID
		f.child = append(f.child, in)
		return DisruptResult{Outcome: PhaseDone}, nil
	})
	env.ExecuteWorkflow(InterruptionWorkflow, InterruptionInput{EventID: "e1", Kind: saga.KindSpotInterrupted, InstanceID: "i-0abc", Private: true})
	var res InterruptionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if id != "disrupt/interruption/p-node" || len(f.child) != 1 || !f.child[0].Private {
		t.Errorf("child %q %+v", id, f.child)
	}
	if _, ok := sa["InstanceID"]; ok {
		t.Errorf("InstanceID search attribute: %v", sa)
	}
	if _, ok := sa["NodeName"]; ok {
		t.Errorf("NodeName search attribute: %v", sa)
	}
}
