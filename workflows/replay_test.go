package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Every recorded history under testdata/histories must replay against the
// current workflow code: a nondeterministic change fails with [TMPRL1100].
// Re-record with: JOINERY_RECORD_HISTORIES=1 go test -tags integration ./test/integration/
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/histories")
	}
	kinds := map[string]bool{}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(Provision, workflow.RegisterOptions{Name: ProvisionWorkflow})
		r.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
		r.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
		r.RegisterWorkflowWithOptions(NodeClaimTermination, workflow.RegisterOptions{Name: NodeClaimTerminationWorkflow})
		r.RegisterWorkflowWithOptions(Consolidation, workflow.RegisterOptions{Name: ConsolidationWorkflow})
		r.RegisterWorkflowWithOptions(Consolidate, workflow.RegisterOptions{Name: ConsolidateWorkflow})
		r.RegisterWorkflowWithOptions(Interruption, workflow.RegisterOptions{Name: InterruptionWorkflow})
		r.RegisterWorkflowWithOptions(InterruptionPoller, workflow.RegisterOptions{Name: InterruptionPollerWorkflow})
		r.RegisterWorkflowWithOptions(Gang, workflow.RegisterOptions{Name: GangWorkflow})
		r.RegisterWorkflowWithOptions(Repair, workflow.RegisterOptions{Name: RepairWorkflow})
		r.RegisterWorkflowWithOptions(GarbageCollection, workflow.RegisterOptions{Name: GarbageCollectionWorkflow})
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		kinds[filepath.Base(f)[:4]] = true
	}
	for _, k := range []string{"prov", "node", "disr", "cons", "inte", "gang"} {
		if !kinds[k] {
			t.Errorf("no recorded history of kind %s*", k)
		}
	}
}
