// Command chaos is a test harness, not part of what Joinery ships: it
// checks durability under failures. It drives the local world through
// provisioning, consolidation, manual drains and spot interruptions while
// it SIGKILLs the controller process at random moments, restarts the
// Temporal server once from its SQLite file and makes the EC2 endpoint
// fail (insufficient capacity, throttling, latency); then it checks that
// nothing was leaked, orphaned or lost and that no PodDisruptionBudget was
// violated.
//
//	go run ./sim/chaos --sagas 200 --seed 1 [--json]
//
// It exits 1 if an invariant fails, 2 on a setup error. TestChaosShort
// (20 sagas, -tags integration) runs it in hack/test.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/joinery/joinery/sim/world"
	"time"
)

func main() {
	if os.Getenv(world.WorkerEnvFlag) == "1" {
		os.Exit(runWorkerFromEnv())
	}
	cfg := DefaultConfig()
	flag.IntVar(&cfg.Sagas, "sagas", 200, "sagas to run (provisioning NodeClaims, drains, consolidation disruptions, interruptions)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of every random choice (actions, kills, faults)")
	flag.StringVar(&cfg.StateDir, "state-dir", ".joinery-chaos", "state of the local world (wiped first)")
	flag.StringVar(&cfg.Examples, "examples", "examples", "folder holding nodepools.yaml and workloads.yaml")
	flag.DurationVar(&cfg.Timeout, "timeout", 90*time.Minute, "give up after this long")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.WorkerExe = exe
	cfg.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rep, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		if rep == nil {
			os.Exit(2)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.Print(os.Stdout)
	}
	if err != nil || !rep.Passed {
		os.Exit(1)
	}
}
