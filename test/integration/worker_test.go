//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/logging"
	"k8s.io/client-go/tools/clientcmd"
)

// TestMain doubles as the worker process for crash tests: with
// JOINERY_IT_WORKER=1 the test binary runs only the controller (as
// `worker` would) until killed.
func TestMain(m *testing.M) {
	if os.Getenv("JOINERY_IT_WORKER") == "1" {
		os.Exit(runWorker())
	}
	os.Exit(m.Run())
}

func runWorker() int {
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("JOINERY_IT_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log, err := logging.NewFile(os.Getenv("JOINERY_IT_LOG"), "info")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := controller.Run(ctx, controller.Config{
		RESTConfig: rc, TemporalAddress: os.Getenv("JOINERY_IT_TEMPORAL"), EC2Endpoint: os.Getenv("JOINERY_IT_EC2"),
		ClusterName: "joinery-it", Log: log,
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// worker is the controller running as its own process.
type worker struct{ cmd *exec.Cmd }

func (e *env) startWorker(t *testing.T) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "JOINERY_IT_WORKER=1",
		"JOINERY_IT_KUBECONFIG="+e.w.Kube.Kubeconfig(), "JOINERY_IT_TEMPORAL="+e.w.Temporal.Address,
		"JOINERY_IT_EC2="+e.w.EC2Endpoint, "JOINERY_IT_LOG="+filepath.Join(e.dir, "joinery.log"))
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
