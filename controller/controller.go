// Package controller is the long-running Joinery controller: it watches
// unschedulable pods, batches them into Provision workflows, runs the
// Temporal worker with every workflow and activity, and serves metrics and
// health. The worker main and `starter dev` both run it.
package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// Config is everything the controller needs; zero durations take defaults.
// Its fields come in groups by concern, embedded so cfg.Field reads them:
// where to connect (Connection), the cluster served (Cluster), what runs
// (Features) and how often and how long (Tuning).
type Config struct {
	Connection
	Cluster
	Features
	Tuning
	// MetricsAddr serves /metrics, /healthz and /readyz (empty: off).
	MetricsAddr string
	// Profiling serves Go's /debug/pprof/ on MetricsAddr too (Karpenter's
	// --enable-profiling).
	Profiling bool
	Log       *zap.Logger
	// Ready, when set, is closed once the worker polls and informers are synced.
	Ready chan<- struct{}
}

// Connection is where the controller connects: Kubernetes, Temporal and
// the AWS APIs.
type Connection struct {
	RESTConfig      *rest.Config
	TemporalAddress string // host:port, default 127.0.0.1:7233
	Namespace       string // default "default"
	// Temporal holds the connection's security: mTLS, API key, payload
	// encryption (zero: plaintext, payloads in clear). Its HostPort and
	// Namespace default to TemporalAddress and Namespace. A half-configured
	// TLS setup makes Run fail before anything starts.
	Temporal temporal.Config
	// EC2Endpoint is the EC2 API base URL (empty: real AWS for Region).
	EC2Endpoint string
	Region      string // default us-east-1
	// SSMEndpoint, IAMEndpoint and EKSEndpoint are API base URLs (empty:
	// real AWS for Region): SSM for the EKS image parameters, IAM for
	// instance profiles, EKS for the cluster's endpoint and CA.
	SSMEndpoint, IAMEndpoint, EKSEndpoint string
	// PricingEndpoint is the Price List API's base URL (empty: real AWS, in
	// cloud.PricingRegion(Region); with a local EC2Endpoint and no
	// PricingEndpoint the embedded on-demand prices are used).
	PricingEndpoint string
	// SQSEndpoint is the SQS base URL (empty: real AWS for Region).
	SQSEndpoint string
	// AWSKey, when set, signs every AWS call (the local world's worker
	// key); zero: the SDK's default credential chain (environment, IRSA or
	// Pod Identity, instance metadata), as in a pod.
	AWSKey aws.StaticKey
}

// Cluster is the cluster the controller serves: its name, what every
// node's user data needs to join it, and the namespaces Joinery keeps its
// own objects in.
type Cluster struct {
	ClusterName string // value of the joinery.sh/cluster tag on instances
	// ClusterEndpoint, ClusterCABundle (base64 PEM), ServiceCIDR and
	// ClusterDNS go into every node's user data; empty ones come from
	// eks:DescribeCluster (see clusterFacts).
	ClusterEndpoint, ClusterCABundle, ServiceCIDR, ClusterDNS string
	// StateNamespace holds the shared-state ConfigMaps (ICE cache,
	// pending-pod memo): the worker's own namespace. Default:
	// LeaseNamespace, else "default".
	StateNamespace string
	// LeaseNamespace holds the Lease of LeaderElect.
	LeaseNamespace string
}

// Features are the optional behaviours: what the controller runs.
type Features struct {
	// DisableDisruption does not start the Consolidation workflow, nor the
	// expiration reconciler.
	DisableDisruption bool
	// DisableSchedulerHints writes no status.nominatedNodeName: the
	// nominations live in Joinery only.
	DisableSchedulerHints bool
	// DisableProvisioning runs no provisioning for pending pods (nor
	// capacity buffers): nodes come only from static pools, gangs,
	// consolidation's replacements and Provision workflows started from
	// outside (a replay's --rebalance-only recreating recorded nodes).
	DisableProvisioning bool
	// SpreadDefaults are kube-scheduler's default topology spread
	// constraints by scheduler name (--scheduler-config, read by
	// schedulerconfig.Load): pods without constraints of their own are
	// planned with them. Nil: none (as Karpenter); with them the worker
	// also watches Services, ReplicationControllers, ReplicaSets and
	// StatefulSets (what selects a pod is the constraints' selector).
	SpreadDefaults solver.SpreadDefaults
	// FeatureGates are the optional behaviours of --feature-gates
	// (ParseFeatureGates): SpotToSpotConsolidation, off by default.
	FeatureGates FeatureGates
	// LeaderElect makes replicas elect one pending-pod watcher through a
	// Lease in LeaseNamespace (every replica still runs the Temporal worker).
	LeaderElect bool
	// InterruptionQueue is the SQS queue URL EventBridge sends EC2
	// interruption events to (empty: interruption handling off).
	// InterruptionRebalanceDrain treats rebalance recommendations like spot
	// interruption warnings (default: an Event and a metric only).
	InterruptionQueue          string
	InterruptionRebalanceDrain bool
	// MinValuesPolicy is Karpenter's MIN_VALUES_POLICY (--min-values-policy):
	// Strict ("" too) or BestEffort (minValues relaxed instead of refused).
	MinValuesPolicy string
}

// Tuning is how often and how long: refresh intervals, batch windows,
// deadlines and budgets.
type Tuning struct {
	// NodeClassResync is how often every EC2NodeClass is resolved again
	// even when unchanged: subnets fill up, security groups and images
	// change (default 1 min; tests shorten it).
	NodeClassResync time.Duration
	// CapacityBlockExpiration is how long before a capacity block's end
	// its reservation is expiring and its nodes are drained (default
	// Karpenter's 40 min, apiv1.CapacityBlockExpirationPeriod; tests
	// shorten it).
	CapacityBlockExpiration time.Duration
	// OfferingsRefresh and SpotPriceRefresh are how often the live catalog
	// reads the instance types (DescribeInstanceTypes; also when an
	// EC2NodeClass's spec changes) and the zones each is sold in
	// (DescribeInstanceTypeOfferings), and the spot prices per zone
	// (DescribeSpotPriceHistory); both are also read once at start
	// (defaults 1 h and 5 min).
	OfferingsRefresh, SpotPriceRefresh time.Duration
	// PricingRefresh is how often the on-demand prices are read from the
	// Price List API (GetProducts), also once at start (default 12 h, as
	// Karpenter).
	PricingRefresh time.Duration
	// BatchIdle and BatchMax bound a provisioning batch (defaults 1 s, 10 s).
	BatchIdle, BatchMax time.Duration
	// RegistrationTTL: instances whose Node is not Ready by then are terminated (default 15 min).
	RegistrationTTL time.Duration
	// LaunchBatchIdle is how long a launch waits for identical ones to
	// share its CreateFleet (aws.Options.LaunchBatchIdle; 0: the default,
	// 100 ms; negative: every launch its own CreateFleet, tagged with its
	// NodeClaim at launch).
	LaunchBatchIdle time.Duration
	// GangDeadline: a ProvisioningRequest try whose nodes are not all
	// Ready by then terminates them all (0: gang.DefaultDeadline, 10 min);
	// GangBooking: how long provisioned nodes are held for the request's
	// pods (0: gang.DefaultBooking, 10 min, as Cluster Autoscaler).
	GangDeadline time.Duration
	GangBooking  time.Duration
	// SolverBudget bounds each solve (0: solver.DefaultBudget); the first
	// plan is always complete, later passes improve it within the budget.
	SolverBudget time.Duration
	// DisruptionPassInterval and DisruptionValidationDelay tune the
	// Consolidation workflow (defaults 10 s and 15 s).
	DisruptionPassInterval, DisruptionValidationDelay time.Duration
	// ICETTL is how long an offering (or a whole vCPU quota) stays out of
	// the plans after EC2 had no capacity for it (default
	// aws.DefaultICETTL, Karpenter's 3 minutes).
	ICETTL time.Duration
	// GCInterval is the time between garbage-collection passes (default
	// 2 min); GCLaunchGrace how long an instance may live without a
	// NodeClaim (default 30 s, gc.DefaultLaunchGrace).
	GCInterval, GCLaunchGrace time.Duration
	// RepairInterval is how often the repair watcher (--feature-gates
	// NodeRepair=true) judges the nodes (default 10 s);
	// RepairTolerationScale multiplies every repair policy's toleration
	// (0: Karpenter's; tests shorten them).
	RepairInterval        time.Duration
	RepairTolerationScale float64
}

// Defaults of the Config fields that have one, defined here once: Run
// falls back on them for zero fields, and the worker's flags show them.
// Other zero durations take the default of the package that uses them
// (RegistrationTTL and the disruption and GC intervals: workflows;
// SolverBudget: solver.DefaultBudget; GCLaunchGrace: gc.DefaultLaunchGrace).
const (
	DefaultTemporalAddress = temporal.DefaultHostPort
	DefaultNamespace       = temporal.DefaultNamespace
	DefaultRegion          = "us-east-1"
	DefaultClusterName     = "joinery"
	DefaultBatchIdle       = time.Second
	DefaultBatchMax        = 10 * time.Second
	DefaultNodeClassResync = time.Minute
	// DefaultKubeNamespace holds the Lease and the shared state when
	// LeaseNamespace and StateNamespace are empty.
	DefaultKubeNamespace = "default"
)

// WithDefaults returns cfg with the defaults above in its zero fields
// (and the Temporal connection's address and namespace from
// TemporalAddress and Namespace when unset).
func (cfg Config) WithDefaults() Config {
	if cfg.TemporalAddress == "" {
		cfg.TemporalAddress = DefaultTemporalAddress
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Temporal.HostPort == "" {
		cfg.Temporal.HostPort = cfg.TemporalAddress
	}
	if cfg.Temporal.Namespace == "" {
		cfg.Temporal.Namespace = cfg.Namespace
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = DefaultClusterName
	}
	if cfg.BatchIdle == 0 {
		cfg.BatchIdle = DefaultBatchIdle
	}
	if cfg.BatchMax == 0 {
		cfg.BatchMax = DefaultBatchMax
	}
	if cfg.NodeClassResync <= 0 {
		cfg.NodeClassResync = DefaultNodeClassResync
	}
	if cfg.OfferingsRefresh <= 0 {
		cfg.OfferingsRefresh = DefaultOfferingsRefresh
	}
	if cfg.SpotPriceRefresh <= 0 {
		cfg.SpotPriceRefresh = DefaultSpotPriceRefresh
	}
	if cfg.PricingRefresh <= 0 {
		cfg.PricingRefresh = DefaultPricingRefresh
	}
	if cfg.StateNamespace == "" {
		cfg.StateNamespace = cfg.LeaseNamespace
	}
	if cfg.StateNamespace == "" {
		cfg.StateNamespace = DefaultKubeNamespace
	}
	if cfg.LeaseNamespace == "" {
		cfg.LeaseNamespace = DefaultKubeNamespace
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return cfg
}

// Run runs the controller until ctx ends: defaults, then the
// dependencies (clients, caches, the activities), then start (the
// Temporal worker, the watchers, the singleton workflows).
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.WithDefaults()
	d, err := newDependencies(ctx, cfg)
	defer d.close()
	if err != nil {
		return err
	}
	return d.start(ctx, cfg)
}

// dependencies are what the controller runs on, built in order by
// newDependencies; close releases them in reverse.
type dependencies struct {
	log       *zap.Logger
	conn      *temporal.Connection
	pseudonym func(string) string // nil: payloads in clear
	metrics   *metrics.Metrics
	cluster   *kube.Cluster
	temporal  client.Client
	acts      *activities.Activities
	classes   *nodeClassReconciler
	expiry    *expirationReconciler
	market    *marketRefresher
	throttles *throttleReporter // AWS throttling: metric and log
	cloud     *aws.Client
	closers   []func()
}

func (d *dependencies) close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}

// newDependencies connects to Kubernetes, AWS and Temporal and builds the
// activities. On error, d holds what was opened (close releases it).
func newDependencies(ctx context.Context, cfg Config) (*dependencies, error) {
	log := cfg.Log
	d := &dependencies{log: log}
	conn, err := d.loadConnection(cfg)
	if err != nil {
		return d, err
	}
	m := metrics.New()
	d.metrics = m
	cl, err := d.startCluster(ctx, cfg)
	if err != nil {
		return d, err
	}
	state := kube.NewStateStore(cl.Kube, cfg.StateNamespace)
	cat, err := catalog.Default()
	if err != nil {
		return d, err
	}
	ice := aws.NewICECache(cfg.ICETTL, nil)
	m.Registry.MustRegister(newNodeCollector(cl, ice))
	d.throttles = newThrottleReporter(m.CloudThrottled, log.Named("aws"))
	cc, err := aws.New(ctx, aws.Options{Region: cfg.Region, Endpoint: cfg.EC2Endpoint, SSMEndpoint: cfg.SSMEndpoint,
		IAMEndpoint: cfg.IAMEndpoint, EKSEndpoint: cfg.EKSEndpoint, PricingEndpoint: cfg.PricingEndpoint, ClusterName: cfg.ClusterName, ICECache: ice,
		Observe: m.ObserveCloud, Throttled: d.throttles.throttled, Key: cfg.AWSKey, LaunchBatchIdle: cfg.LaunchBatchIdle})
	if err != nil {
		return d, fmt.Errorf("aws clients: %w", err)
	}
	d.cloud = cc
	facts, err := clusterFacts(ctx, cfg, cc, log)
	if err != nil {
		return d, err
	}
	d.classes = newNodeClassReconciler(cl, cc, cfg, m.Registry, log)
	d.expiry = newExpirationReconciler(cl, m, log)
	if err := d.dialTemporal(cfg, conn); err != nil {
		return d, err
	}

	// The live catalog: this controller's own (the embedded catalog is
	// shared in-process). It is read in the background from the start
	// (run): a slow EC2 API must not keep the worker from polling, and
	// until the first answer plans use the embedded data.
	market := catalog.NewMarket()
	market.SetCapacityBlockExpiration(cfg.CapacityBlockExpiration)
	d.market = newMarketRefresher(market, cat, cc, cfg, m, log)
	d.classes.market = market
	d.refreshOnNodeClassChange()
	acts := activities.New(activities.Deps{
		Cluster: cl, Cloud: cc, Catalog: cat, Market: market, CatalogStatus: d.market.Summary, ICE: ice, Metrics: m, Log: log,
		ClusterFacts: facts, RegistrationTTL: cfg.RegistrationTTL, Pseudonym: d.pseudonym,
		SolverBudget: cfg.SolverBudget,
		ClusterName:  cfg.ClusterName, State: state,
		SpotToSpotConsolidation: cfg.FeatureGates.SpotToSpotConsolidation,
		StaticCapacity:          cfg.FeatureGates.StaticCapacity,
		CapacityBuffer:          cfg.FeatureGates.CapacityBuffer,
		SpreadDefaults:          cfg.SpreadDefaults,
		MinValuesPolicy:         cfg.MinValuesPolicy,
	})
	acts.EnableLaunchTemplateGC()
	m.Registry.MustRegister(newKarpenterCollector(cl, acts.Prices().Node))
	// The ICE cache and the pending-pod memo are read from (and written
	// to) ConfigMaps before any activity runs here.
	acts.BindSharedState()
	if err := state.Start(ctx, 2*time.Minute); err != nil {
		return d, err
	}
	d.acts = acts
	return d, nil
}

// loadConnection reads the Temporal connection's security (d.conn, and
// d.pseudonym when payloads are encrypted), warning when plaintext
// crosses the network.
func (d *dependencies) loadConnection(cfg Config) (*temporal.Connection, error) {
	conn, err := temporal.Load(cfg.Temporal)
	if err != nil {
		return nil, err
	}
	d.conn = conn
	if conn.Plaintext() && !temporal.IsLoopback(cfg.Temporal.HostPort) {
		d.log.Warn("plaintext connection to Temporal off this machine: workflow data and commands cross the network unprotected; "+
			"configure mTLS (--temporal-tls-cert/--temporal-tls-key/--temporal-tls-ca) or an API key", zap.String("temporal", cfg.Temporal.HostPort))
	}
	if conn.Keyring != nil {
		d.pseudonym = conn.Keyring.Pseudonym
	}
	return conn, nil
}

// startCluster connects to Kubernetes (d.cluster), watches the optional
// kinds that are served and turned on, and syncs the informers.
func (d *dependencies) startCluster(ctx context.Context, cfg Config) (*kube.Cluster, error) {
	log := d.log
	cl, err := kube.New(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	d.cluster = cl
	d.closers = append(d.closers, cl.Shutdown)
	if len(cfg.SpreadDefaults) > 0 {
		cl.WatchSpreadSelectors()
	}
	// ProvisioningRequests are honoured when their CRD is installed.
	if cl.ProvisioningRequestsServed() {
		if err := cl.WatchProvisioningRequests(); err != nil {
			return nil, err
		}
		log.Info("ProvisioningRequests (autoscaling.x-k8s.io/v1) served: gang provisioning on; pods consuming one are provisioned only through it")
	} else {
		log.Info("ProvisioningRequests (autoscaling.x-k8s.io/v1) not served: gang provisioning off (install the CRD and restart to turn it on)")
	}
	if cfg.FeatureGates.NodeOverlay {
		if err := cl.WatchNodeOverlays(); err != nil {
			return nil, err
		}
	}
	if cfg.FeatureGates.CapacityBuffer {
		if err := cl.WatchCapacityBuffers(); err != nil {
			return nil, err
		}
	}
	if err := cl.Start(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	return cl, nil
}

// dialTemporal opens the Temporal client (d.temporal), its SDK metrics
// in d.metrics' registry.
func (d *dependencies) dialTemporal(cfg Config, conn *temporal.Connection) error {
	sdkHandler, sdkCloser := sdkMetrics(d.metrics.Registry)
	d.closers = append(d.closers, func() { _ = sdkCloser.Close() })
	topts := conn.Options
	topts.Logger, topts.MetricsHandler = logging.NewTemporal(d.log), sdkHandler
	tc, err := client.Dial(topts)
	if err != nil {
		return fmt.Errorf("temporal at %s (%s): %w", cfg.Temporal.HostPort, conn.Describe(), err)
	}
	d.temporal = tc
	d.closers = append(d.closers, tc.Close)
	return nil
}

// refreshOnNodeClassChange has d.market read the instance types again
// when an EC2NodeClass's spec changes (a new generation), as Karpenter's
// instance type provider does.
func (d *dependencies) refreshOnNodeClassChange() {
	cl := d.cluster
	generations := map[string]int64{}
	var genMu sync.Mutex
	cl.OnNodeClassChange(func(name string) {
		cls, err := cl.NodeClass(name)
		if err != nil {
			return
		}
		genMu.Lock()
		changed := generations[name] != 0 && generations[name] != cls.Generation
		generations[name] = cls.Generation
		genMu.Unlock()
		if changed {
			d.market.NodeClassChanged()
		}
	})
}

// start runs the Temporal worker, the metrics server, the watchers and the
// singleton workflows, then watches pending pods (when leading) until ctx
// ends.
func (d *dependencies) start(ctx context.Context, cfg Config) error {
	log, tc, m := d.log, d.temporal, d.metrics
	w := newWorker(tc)
	RegisterWorkflows(w)
	d.acts.Register(w)
	interruptions, err := newInterruptionPoller(ctx, cfg, tc, d.pseudonym, m, d.throttles.throttled, log)
	if err != nil {
		return err
	}
	interruptions.Register(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("temporal worker: %w", err)
	}
	d.closers = append(d.closers, w.Stop)

	if cfg.MetricsAddr != "" {
		srv, err := serveMetrics(cfg.MetricsAddr, cfg.Profiling, m, log)
		if err != nil {
			return err
		}
		d.closers = append(d.closers, func() { _ = srv.Close() })
	}
	p := &provisioner{cluster: d.cluster, ledger: d.acts.Ledger(), headroom: d.acts.Headroom, temporal: tc, metrics: m, log: log,
		idle: cfg.BatchIdle, max: cfg.BatchMax, trigger: make(chan struct{}, 1)}
	p.watch()
	pe := newPodEvents(d.cluster, m, log)
	nps := &nodePoolStatus{cl: d.cluster, log: log.Named("nodepool-status")}
	dw := newDeletionWatch(d.cluster, tc, d.pseudonym != nil, log)
	go dw.run(ctx)
	go d.market.run(ctx)
	if err := startSingletons(ctx, tc, cfg); err != nil {
		return err
	}
	log.Info("controller started", zap.String("temporal", cfg.Temporal.HostPort), zap.String("temporalSecurity", d.conn.Describe()),
		zap.String("taskQueue", workflows.TaskQueue))
	if cfg.Ready != nil {
		close(cfg.Ready)
	}
	ov := &overlayStatus{cl: d.cluster, acts: d.acts, log: log, every: 10 * time.Second}
	d.warnIgnored(ctx, cfg)
	var static *staticReconciler
	if cfg.FeatureGates.StaticCapacity {
		static = newStaticReconciler(d.cluster, tc, log)
	}
	var gangs *gangReconciler
	if d.cluster.WatchesProvisioningRequests() {
		gangs = newGangReconciler(d.cluster, d.acts, tc, cfg, log)
	}
	// The watchers only the leader (or the only replica) runs, then the
	// pending-pod provisioner until ctx ends.
	var watchers []func(context.Context)
	if cfg.FeatureGates.NodeOverlay {
		watchers = append(watchers, ov.run)
	}
	if static != nil {
		watchers = append(watchers, static.run)
	}
	if gangs != nil {
		watchers = append(watchers, gangs.run)
	}
	watchers = append(watchers, d.classes.run, pe.run, nps.run)
	if cfg.DisableSchedulerHints {
		d.acts.Nominations().WithoutHints()
	}
	// Without hints it still opens the nodes that registered closed.
	watchers = append(watchers, newSchedulerHints(d.cluster, d.acts.Nominations(), log).run)
	if !cfg.DisableDisruption {
		watchers = append(watchers, d.expiry.run)
	}
	blocks := &capacityBlockWatcher{cl: d.cluster, start: activities.TemporalInterruptionStarter{Client: tc, Pseudonym: d.pseudonym},
		period: cfg.CapacityBlockExpiration, log: log.Named("capacity-block")}
	watchers = append(watchers, blocks.run)
	ended := &reservationEndWatcher{cl: d.cluster, instances: d.cloud.GetAll, log: log.Named("capacity-reservation")}
	watchers = append(watchers, ended.run)
	if cfg.FeatureGates.NodeRepair {
		watchers = append(watchers, newRepairWatcher(d.cluster, tc, d.cloud.ImpairedInstances, d.pseudonym, cfg, log).run)
	}
	lead := func(ctx context.Context) error {
		for _, run := range watchers {
			go run(ctx)
		}
		if cfg.DisableProvisioning {
			<-ctx.Done()
			return nil
		}
		return p.run(ctx)
	}
	if cfg.LeaderElect {
		return runLeading(ctx, d.cluster.Kube, cfg.LeaseNamespace, log, func(lctx context.Context) { _ = lead(lctx) })
	}
	return lead(ctx)
}

// newWorker is the Temporal worker of the task queue. Its pollers scale
// with the backlog, not the SDK's default of two fixed pollers per task
// type: a Provision starts a hundred NodeClaim children at once, and fixed
// pollers leave their launches waiting in the queue.
func newWorker(tc client.Client) worker.Worker {
	return worker.New(tc, workflows.TaskQueue, worker.Options{
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
		ActivityTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
		// A heartbeat carrying progress (a launch's resolved plan) must reach
		// the server before the worker can die: the default batches
		// heartbeats for 80% of the 10 s heartbeat timeout.
		MaxHeartbeatThrottleInterval: time.Second,
	})
}

// warnIgnored warns of NodeOverlays and CapacityBuffers in the cluster
// whose feature gate is off.
func (d *dependencies) warnIgnored(ctx context.Context, cfg Config) {
	if !cfg.FeatureGates.NodeOverlay {
		if n := d.cluster.CountNodeOverlays(ctx); n > 0 {
			d.log.Warn("NodeOverlays are ignored: --feature-gates NodeOverlay=true turns them on", zap.Int("nodeOverlays", n))
		}
	}
	if !cfg.FeatureGates.CapacityBuffer {
		if n := d.cluster.CountCapacityBuffers(ctx); n > 0 {
			d.log.Warn("CapacityBuffers are ignored: --feature-gates CapacityBuffer=true turns them on", zap.Int("capacityBuffers", n))
		}
	}
}

// startSingletons starts (or joins) the singleton workflows: Consolidation
// unless disruption is off, the interruption poller when a queue is set,
// and garbage collection.
func startSingletons(ctx context.Context, tc client.Client, cfg Config) error {
	if !cfg.DisableDisruption {
		if err := startConsolidation(ctx, tc, cfg); err != nil {
			return err
		}
	}
	if cfg.InterruptionQueue != "" {
		if err := startInterruptionPoller(ctx, tc, cfg); err != nil {
			return err
		}
	}
	return startGarbageCollection(ctx, tc, cfg)
}

// RegisterWorkflows registers every workflow under its type name (also used by replay tests).
func RegisterWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(workflows.Provision, workflow.RegisterOptions{Name: workflows.ProvisionWorkflow})
	w.RegisterWorkflowWithOptions(workflows.NodeClaim, workflow.RegisterOptions{Name: workflows.NodeClaimWorkflow})
	w.RegisterWorkflowWithOptions(workflows.DrainAndReplace, workflow.RegisterOptions{Name: workflows.DrainAndReplaceWorkflow})
	w.RegisterWorkflowWithOptions(workflows.NodeClaimTermination, workflow.RegisterOptions{Name: workflows.NodeClaimTerminationWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Consolidation, workflow.RegisterOptions{Name: workflows.ConsolidationWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Consolidate, workflow.RegisterOptions{Name: workflows.ConsolidateWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Interruption, workflow.RegisterOptions{Name: workflows.InterruptionWorkflow})
	w.RegisterWorkflowWithOptions(workflows.InterruptionPoller, workflow.RegisterOptions{Name: workflows.InterruptionPollerWorkflow})
	w.RegisterWorkflowWithOptions(workflows.GarbageCollection, workflow.RegisterOptions{Name: workflows.GarbageCollectionWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Gang, workflow.RegisterOptions{Name: workflows.GangWorkflow})
	w.RegisterWorkflowWithOptions(workflows.Repair, workflow.RegisterOptions{Name: workflows.RepairWorkflow})
}

func serveMetrics(addr string, profiling bool, m *metrics.Metrics, log *zap.Logger) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w (pass another --metrics-addr)", addr, err)
	}
	srv := &http.Server{Addr: l.Addr().String(), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", zap.Error(err))
		}
	}()
	return srv, nil
}

// startConsolidation starts the singleton Consolidation workflow, or joins
// the one already running (its pause state lives there).
func startConsolidation(ctx context.Context, tc client.Client, cfg Config) error {
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.ConsolidationWorkflowID, TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.ConsolidationWorkflow, workflows.ConsolidationInput{
		PassInterval: cfg.DisruptionPassInterval, ValidationDelay: cfg.DisruptionValidationDelay,
	})
	if err != nil {
		return fmt.Errorf("start consolidation workflow: %w", err)
	}
	return nil
}

// startGarbageCollection starts the singleton GarbageCollection workflow,
// or joins the one already running.
func startGarbageCollection(ctx context.Context, tc client.Client, cfg Config) error {
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.GarbageCollectionWorkflowID, TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.GarbageCollectionWorkflow, workflows.GCInput{Interval: cfg.GCInterval, LaunchGrace: cfg.GCLaunchGrace})
	if err != nil {
		return fmt.Errorf("start garbage collection workflow: %w", err)
	}
	return nil
}
