package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/devlinks"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/providers/kube"
	temporalconn "github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/sim/temporal"
	"github.com/joinery/joinery/sim/world"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

type devFlags struct {
	files        []string
	untilSettled bool
	fresh        bool
	stateDir     string
	bootDelay    time.Duration
	bootRegister time.Duration
	bootNetwork  time.Duration
	fastBoot     bool
	systemNodes  int
	consistency  time.Duration
	propagation  time.Duration
	timeout      time.Duration
	metricsAddr  string
	logLevel     string
	discoveryTag string
	region       string
	codecKeyFile string
	adminAddr    string
	featureGates string
	postgres     string
	iamPolicy    string
	// placementGroups are --placement-group's NAME=STRATEGY values.
	placementGroups []string
	// prometheus: run Debian's prometheus on prometheusAddr, scraping
	// the controller.
	prometheus     bool
	prometheusAddr string
	// throttleScale and queueDuplicates: the local AWS's throttling and
	// the interruption queue's duplicate deliveries (world.Options).
	throttleScale   float64
	queueDuplicates float64
}

// envTemporalPostgres is --temporal-postgres's default: a DSN with a
// password belongs in the environment, not on a command line.
const envTemporalPostgres = "JOINERY_TEMPORAL_POSTGRES"

func newDevCommand() *cobra.Command {
	f := &devFlags{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the local world (Kubernetes, Temporal + Web UI, EC2) with the Joinery controller, and apply manifests",
		Long: `dev starts the local world in this process: etcd, kube-apiserver, kube-scheduler,
kube-controller-manager and kwok (built from the Go module proxy on first run),
the Temporal server with its Web UI on 127.0.0.1:8233 (on SQLite in the state
directory, or on PostgreSQL with --temporal-postgres), and an EC2 endpoint serving
the real instance catalog. It runs the Joinery controller against them and applies
the manifests given with -f. State lives in --state-dir, so a second run resumes.

With --until-settled it exits 0 once every pod of the workloads is Running on a
node Joinery launched (exit 2 on --timeout) and prints a summary; without it, it
prints the summary when settled and keeps running until Ctrl-C.`,
		Example: "  go run ./starter dev -f examples/nodepools.yaml -f examples/workloads.yaml --until-settled",
		RunE:    func(cmd *cobra.Command, _ []string) error { return runDev(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "manifest file to apply (repeatable; NodePools, EC2NodeClasses, workloads)")
	fl.BoolVar(&f.untilSettled, "until-settled", false, "exit once every workload pod is Running on a Joinery node (and every CapacityBuffer held)")
	fl.BoolVar(&f.fresh, "fresh", false, "wipe the state directory first")
	fl.StringVar(&f.stateDir, "state-dir", ".joinery", "where etcd data, the Temporal SQLite file, PKI and logs persist")
	fl.DurationVar(&f.bootDelay, "boot-delay", world.EKSBoot.Pending, "how long a new instance stays pending before EC2 reports it running")
	fl.DurationVar(&f.bootRegister, "boot-register", world.EKSBoot.Register,
		"from running until the node's kubelet registers its Node NotReady (OS boot, node agent, kubelet start)")
	fl.DurationVar(&f.bootNetwork, "boot-network", world.EKSBoot.NetworkReady, "from registration until the CNI is up and the Node is Ready")
	fl.IntVar(&f.systemNodes, "system-nodes", world.DefaultSystemNodes,
		"nodes of a managed node group (tainted CriticalAddonsOnly, so no workload fits them) the cluster has before any workload, as a cluster running an autoscaler does")
	fl.BoolVar(&f.fastBoot, "fast-boot", false, "boot nodes in about 3 s (1 s per phase) instead of EKS's 40-60 s; overrides the --boot-* durations")
	fl.DurationVar(&f.consistency, "consistency-window", world.DefaultConsistency,
		"EC2's read-after-write window: a new instance, launch template or tag stays unknown to the API for up to this long (0: off)")
	fl.DurationVar(&f.propagation, "profile-propagation", world.DefaultProfilePropagation,
		"how long a new instance profile, or a role added to one, takes to reach EC2, which refuses it until then (0: at once)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "with --until-settled: give up after this long (exit 2)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "127.0.0.1:8080", "controller /metrics and health address (empty: off)")
	fl.StringVar(&f.logLevel, "log-level", "info", "controller log level: debug, info, warn, error")
	fl.StringVar(&f.adminAddr, "admin-addr", DefaultAdminAddr, "loopback admin endpoint for `starter simulate` (empty: off)")
	fl.StringVar(&f.region, "region", "us-east-1", "the region the local world runs as: zones <region>a/b/c; outside us-east-1 every price is the embedded one x1.1")
	fl.StringVar(&f.discoveryTag, "discovery-tag", "production-eks", "karpenter.sh/discovery tag value of the local subnets and security group")
	fl.Float64Var(&f.throttleScale, "throttle-scale", world.DefaultThrottleScale,
		"the local AWS endpoints' token buckets as a fraction of AWS's defaults (1: AWS's own; lower: an account other tools share; negative: no throttling)")
	fl.Float64Var(&f.queueDuplicates, "queue-duplicates", world.DefaultQueueDuplicates,
		"probability that the interruption queue delivers a message twice, as a standard SQS queue may (negative: never)")
	fl.StringVar(&f.featureGates, "feature-gates", "", "the controller's optional features, as the worker's --feature-gates (e.g. SpotToSpotConsolidation=true)")
	fl.StringVar(&f.postgres, "temporal-postgres", "",
		"run the embedded Temporal server on PostgreSQL instead of SQLite: postgres://user:password@host:port/database?sslmode=disable "+
			"(visibility in <database>_visibility; both created when missing, schemas set up and updated; --fresh empties them; when unset, $"+envTemporalPostgres+")")
	fl.StringVar(&f.iamPolicy, "iam-policy", "",
		"run the worker under this IAM policy (deploy/iam-policy.json's format, placeholders filled by the world) instead of deploy/iam-policy.json; every local AWS call is evaluated against it")
	fl.StringArrayVar(&f.placementGroups, "placement-group", nil,
		"a placement group the local EC2 holds, NAME=cluster, NAME=spread or NAME=partition:COUNT (repeatable; an EC2NodeClass's placementGroupSelector names it)")
	fl.BoolVar(&f.prometheus, "prometheus", false,
		"also run Prometheus (Debian's prometheus package on PATH) scraping the controller's --metrics-addr, and print a link to the dashboard's main graphs")
	fl.StringVar(&f.prometheusAddr, "prometheus-addr", "127.0.0.1:9090", "with --prometheus: its listen address")
	fl.StringVar(&f.codecKeyFile, "codec-key-file", os.Getenv(temporalconn.EnvCodecKeyFile),
		"encrypt workflow payloads with this keyring (the connection stays plaintext on loopback); other commands then need the same keyring, and the Web UI `starter codec-server`")
	return cmd
}

func runDev(parent context.Context, f *devFlags) error {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	objs, err := kube.ReadManifests(f.files...)
	if err != nil {
		return err
	}
	gates, err := controller.ParseFeatureGates(f.featureGates)
	if err != nil {
		return err
	}
	if err := prepareDevState(ctx, f); err != nil {
		return err
	}
	log, err := devLogger(f)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck
	started := time.Now()
	wo := world.Options{
		StateDir: f.stateDir, Boot: f.boot(), DiscoveryTag: f.discoveryTag, Region: f.region, SystemNodes: f.systemNodes,
		Consistency: offIfZero(f.consistency), ProfilePropagation: offIfZero(f.propagation),
		Progress: os.Stderr, Log: log, AdminAddr: f.adminAddr, TemporalPostgres: f.postgres,
		ThrottleScale: f.throttleScale, QueueDuplicates: f.queueDuplicates,
	}
	if wo.PlacementGroups, err = parsePlacementGroups(f.placementGroups); err != nil {
		return err
	}
	if f.iamPolicy != "" {
		if wo.IAMPolicy, err = world.ReadIAMPolicy(f.iamPolicy); err != nil {
			return err
		}
		wo.IAMPolicyName = f.iamPolicy
	}
	w, err := world.Start(ctx, wo)
	if err != nil {
		return err
	}
	defer w.Stop()
	fmt.Fprintf(os.Stderr, "joinery: local world ready in %s; controller log: %s\n",
		time.Since(started).Round(100*time.Millisecond), filepath.Join(w.StateDir, "joinery.log"))

	ready := make(chan struct{})
	ctrlErr := make(chan error, 1)
	cctx, stopCtrl := context.WithCancel(ctx)
	// Stop the controller before the world it talks to (defers run last-in first).
	defer func() { stopCtrl(); <-ctrlErr }()
	go func() {
		ctrlErr <- controller.Run(cctx, devControllerConfig(w, f, gates, log, ready))
	}()
	select {
	case <-ready:
	case err := <-ctrlErr:
		ctrlErr <- err
		return fmt.Errorf("controller: %w", err)
	case <-ctx.Done():
		return nil
	}

	if f.prometheus {
		p, err := startDevPrometheus(ctx, filepath.Join(f.stateDir, "prometheus"), f.prometheusAddr, f.metricsAddr)
		if err != nil {
			return err
		}
		defer p.Stop()
		fmt.Fprintf(os.Stderr, "joinery: Prometheus http://%s scrapes the controller every 5 s (job joinery); the dashboard's main graphs: %s\n",
			p.Addr, p.GraphURL())
	}
	if interrupted, err := applyAndSettle(ctx, f, w, objs, gates.CapacityBuffer); interrupted || err != nil {
		return err
	}
	if f.untilSettled {
		return nil
	}
	fmt.Fprintln(os.Stderr, "joinery: running; Ctrl-C to stop")
	select {
	case <-ctx.Done():
		return nil
	case err := <-ctrlErr:
		ctrlErr <- err
		return err
	}
}

// prepareDevState checks --temporal-postgres (from the environment when
// unset) and creates the state folder, wiped first with --fresh.
func prepareDevState(ctx context.Context, f *devFlags) error {
	if f.postgres == "" {
		// Not the flag's default: --help would print the password.
		f.postgres = os.Getenv(envTemporalPostgres)
	}
	if f.postgres != "" {
		if _, err := temporal.ParsePostgresDSN(f.postgres); err != nil {
			return fmt.Errorf("--temporal-postgres: %w", err)
		}
	}
	if f.fresh {
		if err := world.Wipe(f.stateDir); err != nil {
			return err
		}
		if f.postgres != "" {
			if err := temporal.WipePostgres(ctx, f.postgres); err != nil {
				return fmt.Errorf("--fresh: %w", err)
			}
		}
	}
	return os.MkdirAll(f.stateDir, 0o755)
}

// devControllerConfig points the controller at the local world.
func devControllerConfig(w *world.World, f *devFlags, gates controller.FeatureGates, log *zap.Logger, ready chan<- struct{}) controller.Config {
	return controller.Config{
		Connection: controller.Connection{RESTConfig: w.Kube.RESTConfig(), TemporalAddress: w.Temporal.Address,
			EC2Endpoint: w.EC2Endpoint, SQSEndpoint: w.SQSEndpoint,
			SSMEndpoint: w.SSMEndpoint, IAMEndpoint: w.IAMEndpoint, EKSEndpoint: w.EKSEndpoint,
			PricingEndpoint: w.PricingEndpoint, Region: w.Region, AWSKey: w.WorkerKey(),
			Temporal: temporalconn.Config{CodecKeyFile: f.codecKeyFile}},
		Cluster:     controller.Cluster{ClusterName: "joinery-local"},
		Features:    controller.Features{InterruptionQueue: w.InterruptionQueueURL, FeatureGates: gates},
		MetricsAddr: f.metricsAddr, Log: log, Ready: ready,
	}
}

// applyAndSettle applies the manifests, waits for the capacity buffers
// (buffersOn) and for every expected pod to run (within --timeout with
// --until-settled), and prints where they landed and what it costs;
// interrupted: ctx ended while waiting.
func applyAndSettle(ctx context.Context, f *devFlags, w *world.World, objs []*unstructured.Unstructured, buffersOn bool) (interrupted bool, err error) {
	applied := time.Now()
	if err := kube.Apply(ctx, w.Kube.RESTConfig(), objs); err != nil {
		return false, err
	}
	want, namespaces := world.ExpectedPods(objs)
	fmt.Fprintf(os.Stderr, "joinery: applied %d objects (%d workload pods expected)\n", len(objs), want)
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return false, err
	}
	sctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if !f.untilSettled {
		cancel()
		sctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	buffers, err := waitBuffers(sctx, w, objs, buffersOn)
	if err != nil {
		if ctx.Err() != nil {
			return true, nil // Ctrl-C
		}
		return false, exitError{code: exitNotSettled, err: err}
	}
	settled, err := world.WaitSettled(sctx, kc, want, namespaces)
	if err != nil {
		if ctx.Err() != nil {
			return true, nil // Ctrl-C
		}
		return false, exitError{code: exitNotSettled, err: err}
	}
	took := time.Since(applied)
	fmt.Println()
	settled.Reprice(w.Price) // the region's prices, spot per zone as the nodes pay them
	settled.Print(os.Stdout)
	fmt.Printf("Time from apply to last pod Running: %s\n", took.Round(10*time.Millisecond))
	if line := bootSummary(w.BootTimes()); line != "" {
		fmt.Println(line)
	}
	for _, b := range buffers {
		fmt.Println(b)
	}
	fmt.Println(webUILine(w.Temporal.UIAddress, objs))
	fmt.Printf("kubectl: KUBECONFIG=%s kubectl get nodes,nodeclaims\n", w.Kube.Kubeconfig())
	return false, nil
}

// devLogger writes the controller's JSON log to <state-dir>/joinery.log so
// the terminal keeps the progress lines and the summary.
func devLogger(f *devFlags) (*zap.Logger, error) {
	l, err := logging.NewFile(filepath.Join(f.stateDir, "joinery.log"), f.logLevel)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// waitBuffers waits until the manifests' CapacityBuffers are held (their
// nodes bought) when the gate is on, and says they are ignored when off.
func waitBuffers(ctx context.Context, w *world.World, objs []*unstructured.Unstructured, gate bool) ([]string, error) {
	n := 0
	for _, o := range objs {
		if o.GetKind() == "CapacityBuffer" {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if !gate {
		return []string{fmt.Sprintf("%d CapacityBuffer(s) ignored: run with --feature-gates CapacityBuffer=true", n)}, nil
	}
	dyn, err := dynamic.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return nil, err
	}
	return world.WaitBuffersHeld(ctx, dyn, objs)
}

// offIfZero maps a flag's 0 (off) to the world's "off" (negative; its 0
// is the default).
func offIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// boot is the world's boot phases from the flags: as given (0: none), or
// 1 s each with --fast-boot.
func (f *devFlags) boot() world.BootPhases {
	if f.fastBoot {
		return world.BootPhases{Pending: time.Second, Register: time.Second, NetworkReady: time.Second}
	}
	return world.BootPhases{Pending: offIfZero(f.bootDelay), Register: offIfZero(f.bootRegister), NetworkReady: offIfZero(f.bootNetwork)}
}

// bootSummary says how long the nodes took from launch to Ready ("" when
// none went Ready in this run).
func bootSummary(took []time.Duration) string {
	if len(took) == 0 {
		return ""
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	return fmt.Sprintf("Node boot time, launch to Ready: %d node(s), median %s, min %s, max %s",
		len(took), r(took[len(took)/2]), r(took[0]), r(took[len(took)-1]))
}

// webUILine links the Web UI's workflow list, filtered by the manifests'
// first NodePool when they have one.
func webUILine(ui string, objs []*unstructured.Unstructured) string {
	for _, o := range objs {
		if o.GetKind() == "NodePool" {
			return fmt.Sprintf("Temporal Web UI: %s (the workflows of NodePool %s's nodes, one nodeclaim/... per node; clear the query for all)",
				devlinks.TemporalWorkflows(ui, "default", devlinks.NodePoolQuery(o.GetName())), o.GetName())
		}
	}
	return fmt.Sprintf("Temporal Web UI: %s (one nodeclaim/... workflow per node; filter with a query such as NodePool = \"general-purpose\")",
		devlinks.TemporalWorkflows(ui, "default", ""))
}
