//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/sim/temporal"
	"github.com/joinery/joinery/test/history"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestRecordConsolidationDriftHistory records (JOINERY_RECORD_HISTORIES=1,
// JOINERY_RECORD_DRIFT_AS=<file name>) a Consolidation run that decides
// drift three times, with scripted activities and a scripted
// DrainAndReplace (pool a's replacement fails) on the real Temporal
// server. It compiles against the code from before the drift back-off
// too: run there (git worktree at 909541f) it recorded
// consolidation-drift-v0.json (a1 three times: no back-off), the history
// the replay test must still replay; here consolidation-drift.json (a1,
// then pool b's node while pool a is backed off).
func TestRecordConsolidationDriftHistory(t *testing.T) {
	parallel(t)
	name := os.Getenv("JOINERY_RECORD_DRIFT_AS")
	if os.Getenv("JOINERY_RECORD_HISTORIES") != "1" || name == "" {
		t.Skip("records with JOINERY_RECORD_HISTORIES=1 JOINERY_RECORD_DRIFT_AS=<name>")
	}
	s := slotOf(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := temporal.Start(ctx, temporal.Options{FrontendPort: port(s, 17233), UIPort: -1, SearchAttributes: workflows.SearchAttributeNames,
		LogFile: filepath.Join(t.TempDir(), "temporal.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(workflows.Consolidation, workflow.RegisterOptions{Name: workflows.ConsolidationWorkflow})
	w.RegisterWorkflowWithOptions(func(_ workflow.Context, in workflows.DisruptInput) (workflows.DisruptResult, error) {
		if in.NodeName == "a1" {
			res := workflows.DisruptResult{Outcome: workflows.PhaseFailed, Why: "replacement failed: InsufficientInstanceCapacity"}
			return res, sdktemporal.NewNonRetryableApplicationError(res.Why, workflows.ErrReplacementFailed, nil)
		}
		return workflows.DisruptResult{Outcome: workflows.PhaseDone}, nil
	}, workflow.RegisterOptions{Name: workflows.DrainAndReplaceWorkflow})
	// The decision names its NodePool as the back-off reads it ("nodePool"),
	// whether or not this code's DisruptionDecision has the field.
	type decision struct {
		saga.DisruptionDecision
		NodePool string `json:"nodePool,omitempty"`
	}
	// Passes 1-3 decide drift: pool a's node unless the pass says pool a
	// is backed off ("driftNotBefore", read as JSON for the same reason),
	// then pool b's. The code before the back-off sends no such field and
	// drifts a1 twice.
	pass := 0
	w.RegisterActivityWithOptions(func(_ context.Context, p map[string]interface{}) (decision, error) {
		pass++
		drift := func(node, pool string) decision {
			return decision{saga.DisruptionDecision{Method: saga.MethodDrift, Reason: saga.ReasonDrifted, Nodes: []string{node},
				Replace: true, Why: "drifted: label karpenter.k8s.aws/instance-family=m7i is not admitted"}, pool}
		}
		nb, _ := p["driftNotBefore"].(map[string]interface{})
		switch {
		case pass <= 3 && nb["a"] == nil:
			return drift("a1", "a"), nil
		case pass <= 3:
			return drift("b1", "b"), nil
		}
		return decision{DisruptionDecision: saga.DisruptionDecision{Why: "nothing to do among 2 candidates"}}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityComputeDisruption})
	w.RegisterActivityWithOptions(func(context.Context, saga.DisruptionDecision) (saga.Validation, error) {
		return saga.Validation{Valid: true}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityValidateDisruption})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ConsolidationWorkflowID, TaskQueue: workflows.TaskQueue},
		workflows.ConsolidationWorkflow, workflows.ConsolidationInput{PassInterval: 100 * time.Millisecond, ValidationDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The first run ends in continue-as-new after its passes.
	for {
		d, err := c.DescribeWorkflowExecution(ctx, workflows.ConsolidationWorkflowID, run.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the Consolidation run did not continue as new")
		case <-time.After(200 * time.Millisecond):
		}
	}
	data, err := history.ExportRun(ctx, c, workflows.ConsolidationWorkflowID, run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("../../workflows/testdata/histories", name+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = c.TerminateWorkflow(ctx, workflows.ConsolidationWorkflowID, "", "recorded")
	t.Logf("recorded %s.json (%d bytes, %d passes)", name, len(data), pass)
}
