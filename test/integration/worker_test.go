//go:build integration

package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/joinery/joinery/sim/world"
)

// TestMain doubles as the worker process for crash tests: with
// world.WorkerEnvFlag=1 the test binary runs only the controller (as
// `worker` would) until killed.
func TestMain(m *testing.M) {
	if os.Getenv(world.WorkerEnvFlag) == "1" {
		os.Exit(world.RunWorkerFromEnv(nil))
	}
	os.Exit(m.Run())
}

// worker is the controller running as its own process.
type worker struct{ cmd *exec.Cmd }

func (e *env) startWorker(t *testing.T, env ...string) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// The solver's whole search, as in the in-process controller (env may
	// override it: the last value of a key wins).
	cmd.Env = append(append(os.Environ(), e.w.WorkerEnv("joinery-it")...), "JOINERY_WORKER_SOLVER_BUDGET=-1ns")
	for _, kv := range env {
		if a, ok := strings.CutPrefix(kv, "JOINERY_WORKER_METRICS="); ok {
			kv = "JOINERY_WORKER_METRICS=" + e.addr(a) // the tests name slot 0's addresses
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{cmd: cmd}
	t.Cleanup(func() { w.kill() })
	return w
}

// kill SIGKILLs the worker (no chance to clean up) and reaps it.
func (w *worker) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}
