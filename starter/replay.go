package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/preview/record"
	"github.com/joinery/joinery/preview/replay"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/world"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// replayFlags are `starter replay`'s flags.
type replayFlags struct {
	dev                  devFlags
	recording, nodePools string
	speed                float64
	bucket, interval     time.Duration
	warmup               time.Duration
	chart, report        string
	rebalanceOnly        bool
}

// newReplayCommand is `starter replay`: a recording's workload lived again
// on the local world with Joinery, against what the recorded cluster had.
func newReplayCommand() *cobra.Command {
	f := &replayFlags{dev: devFlags{stateDir: ".joinery-replay", fresh: true, metricsAddr: "", adminAddr: "", logLevel: "info",
		discoveryTag: "production-eks", region: "us-east-1", consistency: world.DefaultConsistency,
		propagation: world.DefaultProfilePropagation, throttleScale: world.DefaultThrottleScale, queueDuplicates: world.DefaultQueueDuplicates,
		bootDelay: world.EKSBoot.Pending, bootRegister: world.EKSBoot.Register, bootNetwork: world.EKSBoot.NetworkReady}}
	cmd := &cobra.Command{
		Use:   "replay -f recording.json [--nodepools nodepools.yaml] [--speed 10] [--rebalance-only]",
		Short: "Replay a recording (starter record) on the local world with Joinery; report nodes, cost, pending pods and disruption against the recorded cluster",
		Long: `replay starts a fresh local world (in --state-dir) with the Joinery controller, applies the
NodePools and EC2NodeClasses of --nodepools (default: the recording's own), and recreates the
recording's workload in time, --speed times faster: its Deployments, StatefulSets, Jobs, bare
pods, PDBs and PriorityClasses as they were at the start, then every change the recording saw
(the controllers' pods are made by the local world's own controllers); the clock starts once
the workload the recording started with runs (up to --warmup). Every --interval of recorded
time it samples Joinery's nodes (priced at the catalog's list prices, spot at its spot
estimate), the pods still pending, the pods Joinery's drains evicted and the spot interruptions
it handled (its Evicted and SpotInterrupted Events); at the end it prints, per --bucket of
recorded time, the recorded cluster's nodes, USD/hour (its Nodes priced the same way), pending
pod-seconds, evicted pods and spot interruptions (what the recording shows of them: pods deleted
on draining nodes, spot nodes gone unreachable) beside the replay's, and writes --chart (SVG or
PNG) and --report (JSON). Each spot interruption the recording shows is inflicted, at its time,
on a spot node of the replay's (of the same instance type when one is).

--rebalance-only skips Joinery's provisioning: the recorded nodes are bought again as NodeClaims
of the same instance type, zone and capacity type in the NodePools, when the recorded cluster
got them, and only Joinery's disruption (consolidation, drift, expiry) changes them: the
report shows what consolidation would have done with the recorded cluster's own capacity.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReplay(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.recording, "filename", "f", "", "the recording (starter record -o; .gz for a gzipped one)")
	fl.StringVar(&f.nodePools, "nodepools", "", "NodePools and EC2NodeClasses to replay on (default: the recording's)")
	fl.Float64Var(&f.speed, "speed", 10, "recorded seconds per replayed second")
	fl.DurationVar(&f.bucket, "bucket", time.Hour, "the report's row length, in recorded time")
	fl.DurationVar(&f.interval, "interval", 30*time.Second, "recorded time between samples")
	fl.DurationVar(&f.warmup, "warmup", 10*time.Minute, "wait up to this long for the recording's starting workload to run before the clock starts")
	fl.BoolVar(&f.rebalanceOnly, "rebalance-only", false, "no provisioning: recreate the recorded nodes and let only consolidation change them")
	fl.StringVar(&f.chart, "chart", "replay.svg", "chart of USD/hour and nodes over time (.svg, else PNG; empty: none)")
	fl.StringVar(&f.report, "report", "", "write the samples and rows as JSON here")
	fl.StringVar(&f.dev.stateDir, "state-dir", f.dev.stateDir, "the replay world's state (wiped first)")
	fl.BoolVar(&f.dev.fastBoot, "fast-boot", false, "boot nodes in about 3 s instead of EKS's 40-60 s")
	fl.StringVar(&f.dev.discoveryTag, "discovery-tag", f.dev.discoveryTag, "karpenter.sh/discovery tag of the local subnets (the EC2NodeClasses' selector value)")
	return cmd
}

func runReplay(parent context.Context, f *replayFlags) error {
	if f.recording == "" {
		return fmt.Errorf("-f recording.json is required")
	}
	rec, err := record.ReadFile(f.recording)
	if err != nil {
		return err
	}
	pools, err := replayPools(f, rec)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, stopWorld, err := startReplayWorld(ctx, &f.dev, f.rebalanceOnly)
	if err != nil {
		return err
	}
	defer stopWorld()
	if err := kube.Apply(ctx, w.Kube.RESTConfig(), pools); err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "joinery: replaying %s of recording at %gx; workflows: %s/namespaces/default/workflows\n",
		rec.End.Sub(rec.Start).Round(time.Second), f.speed, w.Temporal.UIAddress)
	r := replay.Runner{Kube: kc, Dynamic: dc, Catalog: catalog.MustDefault(), Speed: f.speed, Interval: f.interval, Warmup: f.warmup, Log: os.Stderr,
		Interrupt: replay.SpotInterrupter{Kube: kc, Simulate: func(ctx context.Context, node string) error {
			_, err := w.SimulateInterruption(ctx, world.SimulateRequest{Node: node, Kind: world.SimSpot})
			return err
		}}.Interrupt}
	if f.rebalanceOnly {
		tc, err := client.Dial(client.Options{HostPort: w.Temporal.Address, Logger: logging.NopTemporal()})
		if err != nil {
			return fmt.Errorf("temporal at %s: %w", w.Temporal.Address, err)
		}
		defer tc.Close()
		r.Recreate = (&replay.Recreator{Temporal: tc, Dynamic: dc, Log: os.Stderr}).Recreate
	}
	samples, err := r.Run(ctx, rec)
	if err != nil {
		return err
	}
	return writeReplay(f, samples)
}

// replayPools are --nodepools' objects, or the recording's NodePools and
// EC2NodeClasses.
func replayPools(f *replayFlags, rec *record.Recording) ([]*unstructured.Unstructured, error) {
	if f.nodePools != "" {
		return kube.ReadManifests(f.nodePools)
	}
	out := replay.Pools(rec)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no NodePools: give --nodepools (e.g. starter migrate's output for a Cluster Autoscaler cluster)", f.recording)
	}
	return out, nil
}

// startReplayWorld starts a fresh local world and the controller (without
// provisioning for noProvisioning); stop stops both.
func startReplayWorld(ctx context.Context, f *devFlags, noProvisioning bool) (*world.World, func(), error) {
	if err := prepareDevState(ctx, f); err != nil {
		return nil, nil, err
	}
	log, err := devLogger(f)
	if err != nil {
		return nil, nil, err
	}
	w, err := world.Start(ctx, world.Options{StateDir: f.stateDir, Boot: f.boot(), DiscoveryTag: f.discoveryTag, Region: f.region,
		Consistency: offIfZero(f.consistency), ProfilePropagation: offIfZero(f.propagation), Progress: os.Stderr, Log: log,
		ThrottleScale: f.throttleScale, QueueDuplicates: f.queueDuplicates})
	if err != nil {
		return nil, nil, err
	}
	ready, ctrlErr := make(chan struct{}), make(chan error, 1)
	cctx, stopCtrl := context.WithCancel(ctx)
	go func() {
		cfg := devControllerConfig(w, f, controller.FeatureGates{}, log, ready)
		cfg.DisableProvisioning = noProvisioning
		ctrlErr <- controller.Run(cctx, cfg)
	}()
	stop := func() { stopCtrl(); <-ctrlErr; w.Stop(); _ = log.Sync() }
	select {
	case <-ready:
		return w, stop, nil
	case err := <-ctrlErr:
		ctrlErr <- err
		stop()
		return nil, nil, fmt.Errorf("controller: %w", err)
	}
}

// writeReplay prints the table and writes the chart and the report.
func writeReplay(f *replayFlags, samples []replay.Sample) error {
	rows := replay.Rows(samples, f.interval, f.bucket)
	if err := replay.WriteTable(os.Stdout, rows); err != nil {
		return err
	}
	if f.chart != "" {
		if err := replay.WriteChart(f.chart, samples); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "joinery: chart", f.chart)
	}
	if f.report == "" {
		return nil
	}
	b, err := json.MarshalIndent(map[string]any{"samples": samples, "rows": rows}, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Clean(f.report), b, 0o644)
}
