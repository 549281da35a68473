// Package history exports workflow histories as JSON (the shape `temporal
// workflow show --output json` prints) so replay tests can check that
// workflow code changes stay deterministic. Test support only: the
// integration tests record with it (JOINERY_RECORD_HISTORIES=1).
package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// Export reads the full history of a workflow's latest run.
func Export(ctx context.Context, c client.Client, workflowID string) ([]byte, error) {
	return ExportRun(ctx, c, workflowID, "")
}

// ExportRun reads the full history of one run of a workflow ("": the latest).
func ExportRun(ctx context.Context, c client.Client, workflowID, runID string) ([]byte, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	return temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
}

// Save exports a workflow's history into dir as <name>.json.
func Save(ctx context.Context, c client.Client, workflowID, dir, name string) error {
	data, err := Export(ctx, c, workflowID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sanitize(name)+".json"), data, 0o644)
}

func sanitize(s string) string { return strings.NewReplacer("/", "_", ":", "_").Replace(s) }
