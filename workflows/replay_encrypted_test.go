package workflows

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinery/joinery/providers/temporal/codec"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// testKeyring is published test data (see testdata/encrypted/README.md).
const testKeyring = "testdata/encrypted/TEST-ONLY-keyring.json"

func encryptedReplayer(k *codec.Keyring) worker.WorkflowReplayer {
	opts := worker.WorkflowReplayerOptions{}
	if k != nil {
		opts.DataConverter = codec.DataConverter(k)
		opts.FailureConverter = codec.FailureConverter(opts.DataConverter)
	}
	r, err := worker.NewWorkflowReplayerWithOptions(opts)
	if err != nil {
		panic(err)
	}
	r.RegisterWorkflowWithOptions(Provision, workflow.RegisterOptions{Name: ProvisionWorkflow})
	r.RegisterWorkflowWithOptions(NodeClaim, workflow.RegisterOptions{Name: NodeClaimWorkflow})
	r.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	r.RegisterWorkflowWithOptions(Consolidation, workflow.RegisterOptions{Name: ConsolidationWorkflow})
	r.RegisterWorkflowWithOptions(Interruption, workflow.RegisterOptions{Name: InterruptionWorkflow})
	r.RegisterWorkflowWithOptions(InterruptionPoller, workflow.RegisterOptions{Name: InterruptionPollerWorkflow})
	return r
}

// Histories recorded with payload encryption on replay with the codec: with
// the test keyring, and after a rotation (a new active key, the test key
// kept for reading). Without the codec they cannot be read at all, which
// shows their payloads really are encrypted.
func TestReplayEncryptedHistories(t *testing.T) {
	raw, err := os.ReadFile(testKeyring)
	if err != nil {
		t.Fatal(err)
	}
	k, err := codec.ParseKeyring(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Rotation: a new active key; the test key stays to read old histories.
	var rf codec.KeyringFile
	if err := json.Unmarshal(raw, &rf); err != nil {
		t.Fatal(err)
	}
	nk, err := codec.GenerateKeyringFile("rotated")
	if err != nil {
		t.Fatal(err)
	}
	rf.Keys["rotated"], rf.ActiveKeyID = nk.Keys["rotated"], "rotated"
	rb, _ := json.Marshal(rf)
	rotated, err := codec.ParseKeyring(rb)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/encrypted/*.json")
	kinds := map[string]bool{}
	for _, f := range files {
		if strings.Contains(f, "TEST-ONLY") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("YmluYXJ5L2VuY3J5cHRlZA")) { // base64 of "binary/encrypted"
			t.Errorf("%s holds no encrypted payload", f)
		}
		for name, kr := range map[string]*codec.Keyring{"test keyring": k, "rotated keyring": rotated} {
			if err := encryptedReplayer(kr).ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Errorf("%s with the %s: %v", f, name, err)
			}
		}
		quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler)) // the expected failure logs a panic
		if err := encryptedReplayer(nil).ReplayWorkflowHistoryFromJSONFile(quiet, f); err == nil {
			t.Errorf("%s replays without the codec: its payloads are not encrypted", f)
		}
		kinds[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, want := range []string{"provision", "nodeclaim", "disrupt"} {
		if !kinds[want] {
			t.Errorf("no encrypted history %s.json in testdata/encrypted", want)
		}
	}
}
