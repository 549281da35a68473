//go:build integration

package integration

import (
	"os"
	"testing"

	"github.com/joinery/joinery/test/history"
)

// recordHistories saves workflow histories into workflows/testdata/histories
// for the replay test when JOINERY_RECORD_HISTORIES=1.
func recordHistories(t *testing.T, e *env, ids ...string) {
	if os.Getenv("JOINERY_RECORD_HISTORIES") != "1" {
		return
	}
	for _, id := range ids {
		if err := history.Save(e.ctx, e.tc, id, "../../workflows/testdata/histories", kindName(id)); err != nil {
			t.Errorf("record %s: %v", id, err)
		}
	}
}

// recordHistoryAs saves one workflow's history as <name>.json (for ids
// whose kind name would overwrite another kind's recording).
func recordHistoryAs(t *testing.T, e *env, id, name string) {
	if os.Getenv("JOINERY_RECORD_HISTORIES") != "1" {
		return
	}
	if err := history.Save(e.ctx, e.tc, id, "../../workflows/testdata/histories", name); err != nil {
		t.Errorf("record %s: %v", id, err)
	}
}

// kindName names a recorded history by workflow kind, not by its random id.
func kindName(id string) string {
	if id == "consolidation" {
		return id
	}
	for _, p := range []string{"provision/", "nodeclaim/", "disrupt/", "interruption/", "repair/"} {
		if len(id) > len(p) && id[:len(p)] == p {
			return p[:len(p)-1]
		}
	}
	return id
}
