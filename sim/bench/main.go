// Command bench measures Joinery's whole provisioning path on the local
// world: it applies Deployments totalling --pods pods of mixed shapes over
// the example NodePools (plus a DaemonSet) and reports the time from apply
// to the first Provision workflow, to every NodeClaim launched, every Node
// Ready and every pod Running, the nodes and $/hour against the solver's
// lower bound, peak RSS, workflow counts and EC2 calls.
//
//	go run ./sim/bench --pods 1000 [--json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/joinery/joinery/cluster"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/logging"
	"github.com/joinery/joinery/sim/kube"
	"github.com/joinery/joinery/sim/world"
)

func main() {
	pods := flag.Int("pods", 1000, "pods to provision (1000, 5000, 10000)")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	boot := flag.Duration("boot-delay", 2*time.Second, "simulated instance boot time")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	flag.Parse()
	r, err := run(*pods, *boot, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if *asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	r.print()
}

func run(pods int, boot, timeout time.Duration) (*Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "joinery-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	log, err := logging.NewFile(filepath.Join(dir, "joinery.log"), "warn")
	if err != nil {
		return nil, err
	}
	w, err := world.Start(ctx, world.Options{
		StateDir: dir, BootDelay: boot, TemporalPort: 47233, UIPort: -1, Progress: os.Stderr, Log: log,
		KubePorts: kube.Ports{Etcd: 53790, EtcdPeer: 53791, APIServer: 56443, Scheduler: 56459, ControllerManager: 56457, Kwok: 56480},
	})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(cctx, controller.Config{
			RESTConfig: w.Kube.RESTConfig(), TemporalAddress: w.Temporal.Address, EC2Endpoint: w.EC2Endpoint,
			ClusterName: "joinery-bench", Log: log, Ready: ready, DisableDisruption: true,
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		return nil, err
	}
	pools, err := cluster.ReadManifests(repoFile("examples/nodepools.yaml"))
	if err != nil {
		return nil, err
	}
	if err := cluster.Apply(ctx, w.Kube.RESTConfig(), pools); err != nil {
		return nil, err
	}
	return measure(ctx, w, pods)
}

// repoFile finds a file relative to the repository root (the folder with go.mod).
func repoFile(rel string) string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, rel)
		}
	}
	return rel
}

// Report holds the measured figures (durations from the apply).
type Report struct {
	Pods             int            `json:"pods"`
	FirstProvision   time.Duration  `json:"firstProvision"`
	AllLaunched      time.Duration  `json:"allLaunched"`
	AllNodesReady    time.Duration  `json:"allNodesReady"`
	AllPodsRunning   time.Duration  `json:"allPodsRunning"`
	Nodes            int            `json:"nodes"`
	USDPerHour       float64        `json:"usdPerHour"`
	LowerBound       float64        `json:"lowerBoundUsdPerHour"`
	ProvisionRuns    int            `json:"provisionWorkflows"`
	NodeClaimRuns    int            `json:"nodeClaimWorkflows"`
	EC2Calls         map[string]int `json:"ec2Calls"`
	PeakRSSMiB       float64        `json:"peakRssMiB"` // this process: worker + Temporal server + sims
	KubeAPIServerMiB float64        `json:"kubeApiserverRssMiB"`
}

func (r *Report) print() {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pods\t%d\n", r.Pods)
	fmt.Fprintf(tw, "apply -> first Provision workflow\t%s\n", r.FirstProvision.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every NodeClaim launched\t%s\n", r.AllLaunched.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every Node Ready\t%s\n", r.AllNodesReady.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every pod Running\t%s\n", r.AllPodsRunning.Round(time.Millisecond))
	fmt.Fprintf(tw, "nodes\t%d\n", r.Nodes)
	fmt.Fprintf(tw, "USD/hour (lower bound, ratio)\t%.2f (%.2f, %.2f)\n", r.USDPerHour, r.LowerBound, r.USDPerHour/max(r.LowerBound, 1e-9))
	fmt.Fprintf(tw, "Provision / NodeClaim workflows\t%d / %d\n", r.ProvisionRuns, r.NodeClaimRuns)
	fmt.Fprintf(tw, "EC2 calls\t%v\n", r.EC2Calls)
	fmt.Fprintf(tw, "peak RSS: worker+Temporal+sims / kube-apiserver\t%.0f MiB / %.0f MiB\n", r.PeakRSSMiB, r.KubeAPIServerMiB)
	_ = tw.Flush()
}
