package main

import (
	"os"
	"os/exec"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/world"
)

// runWorkerFromEnv runs the controller of a re-executed chaos binary, with
// short disruption passes so the run sees consolidation, and garbage
// collection every 10 s so its invariants are checked at a short horizon.
// Spot-to-spot consolidation is on: the run's capacity faults push spot
// NodeClaims onto dearer types, which with the gate off (Karpenter's
// default) consolidation may only delete, never replace, and the cost
// invariant would measure the gate rather than the sagas.
func runWorkerFromEnv() int {
	return world.RunWorkerFromEnv(func(c *controller.Config) {
		c.FeatureGates.SpotToSpotConsolidation = true
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 3*time.Second, 3*time.Second
		c.GCInterval, c.GCLaunchGrace = gcInterval, gcGrace
	})
}

// workerProc is the controller running as its own process.
type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startWorker(exe string, args, env []string) (*workerProc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
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
