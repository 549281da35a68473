package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/logging"
	"k8s.io/client-go/tools/clientcmd"
)

// workerEnv makes this binary (or the test binary) run only the controller,
// as the `worker` main would, until it is killed.
const workerEnv = "JOINERY_CHAOS_WORKER"

// runWorkerFromEnv runs the controller configured by JOINERY_CHAOS_* and
// returns the process exit code.
func runWorkerFromEnv() int {
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("JOINERY_CHAOS_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log, err := logging.NewFile(os.Getenv("JOINERY_CHAOS_LOG"), "info")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := controller.Run(ctx, controller.Config{
		RESTConfig: rc, TemporalAddress: os.Getenv("JOINERY_CHAOS_TEMPORAL"), EC2Endpoint: os.Getenv("JOINERY_CHAOS_EC2"),
		ClusterName: "joinery-chaos", Log: log,
		DisruptionPassInterval: 3 * time.Second, DisruptionValidationDelay: 3 * time.Second,
		InterruptionQueue: os.Getenv("JOINERY_CHAOS_QUEUE"), SQSEndpoint: os.Getenv("JOINERY_CHAOS_SQS"),
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerProc is the controller running as its own process.
type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startWorker(exe string, args, env []string) (*workerProc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, workerEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.done) }()
	return w, nil
}

// kill SIGKILLs the worker (no chance to clean up) and reaps it.
func (w *workerProc) kill() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Kill()
	<-w.done
}

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
