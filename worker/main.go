// Command worker is the Joinery controller as it runs in a cluster: the
// Temporal worker, the pending-pod watcher and the metrics endpoint.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/policy/schedulerconfig"
	"github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/solver"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	var (
		kubeconfig   = flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path (empty: in-cluster config)")
		temporalAddr = flag.String("temporal-address", controller.DefaultTemporalAddress, "Temporal frontend host:port")
		namespace    = flag.String("temporal-namespace", controller.DefaultNamespace, "Temporal namespace")
		ec2Endpoint  = flag.String("ec2-endpoint", "", "EC2 API base URL (empty: AWS for --region)")
		region       = flag.String("region", controller.DefaultRegion, "AWS region")
		clusterName  = flag.String("cluster-name", controller.DefaultClusterName, "cluster name tagged on every instance")
		metricsAddr  = flag.String("metrics-addr", "127.0.0.1:8080", "address for /metrics, /healthz, /readyz (loopback by default; in a pod pass e.g. :8080 so the kubelet and Prometheus reach it)")
		leaderElect  = flag.Bool("leader-elect", false, "elect one pending-pod watcher among replicas (Lease "+controller.LeaseName+")")
		leaseNS      = flag.String("leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader-election Lease (default $POD_NAMESPACE, else default)")
		dev          = flag.Bool("dev", false, "console logs instead of JSON")
		level        = flag.String("log-level", "info", "debug, info, warn or error")
		queue        = flag.String("interruption-queue", "", "SQS queue URL EventBridge sends EC2 interruption events to (empty: off)")
		sqsEndpoint  = flag.String("sqs-endpoint", "", "SQS API base URL (empty: AWS for --region)")
		ssmEndpoint  = flag.String("ssm-endpoint", "", "SSM API base URL (empty: AWS for --region)")
		iamEndpoint  = flag.String("iam-endpoint", "", "IAM API base URL (empty: AWS)")
		eksEndpoint  = flag.String("eks-endpoint", "", "EKS API base URL (empty: AWS for --region)")
		apiEndpoint  = flag.String("cluster-endpoint", "", "Kubernetes API endpoint nodes join (empty: from eks:DescribeCluster)")
		caBundle     = flag.String("cluster-ca-bundle", "", "base64 PEM CA bundle of the API server (empty: from eks:DescribeCluster, else the kubeconfig's)")
		serviceCIDR  = flag.String("service-cidr", "", "service CIDR, needed by AL2023 nodes (empty: from eks:DescribeCluster)")
		clusterDNS   = flag.String("cluster-dns", "", "cluster DNS IP for the kubelet (empty: spec.kubelet.clusterDNS, else the node derives it from the service CIDR)")
		rebalance    = flag.Bool("interruption-rebalance-drain", false, "treat rebalance recommendations like spot interruption warnings")
		disruption   = flag.Bool("disruption", true, "run consolidation, drift, expiration and emptiness (false: provisioning and interruption handling only)")
		hintsOn      = flag.Bool("scheduler-hints", true, "point pending pods at the Ready node launched for them (status.nominatedNodeName; needs patch on pods/status): the kube-scheduler keeps their room there, at a CPU cost that grows with the pods pointed (false: nominations live in Joinery only, as Karpenter's)")
		offersEvery  = flag.Duration("offerings-refresh", controller.DefaultOfferingsRefresh, "how often the zones each instance type is sold in are read again (ec2:DescribeInstanceTypeOfferings; also at start)")
		priceEvery   = flag.Duration("pricing-refresh", controller.DefaultPricingRefresh, "how often on-demand prices are read again (pricing:GetProducts, the Price List API; also at start)")
		pricingURL   = flag.String("pricing-endpoint", "", "Price List API base URL (empty: AWS, in us-east-1, eu-central-1 or ap-south-1 as --region decides)")
		spotEvery    = flag.Duration("spot-price-refresh", controller.DefaultSpotPriceRefresh, "how often spot prices per instance type and zone are read again (ec2:DescribeSpotPriceHistory; also at start)")
		minValues    = flag.String("min-values-policy", envOr("MIN_VALUES_POLICY", activities.MinValuesPolicyStrict), "Karpenter's min values policy (default $MIN_VALUES_POLICY, else Strict): Strict refuses a NodeClaim whose instance types cannot meet a requirement's minValues, BestEffort plans it with minValues lowered to what they meet (annotated karpenter.sh/nodeclaim-min-values-relaxed)")
		budget       = flag.Duration("solver-budget", solver.DefaultBudget, "time each solve may take: the first plan is always complete, later passes improve it within this")
		schedConfig  = flag.String("scheduler-config", "", "kube-scheduler's KubeSchedulerConfiguration file: pods without topology spread constraints are planned with its PodTopologySpread default constraints (empty: none, as Karpenter)")
		gates        = flag.String("feature-gates", os.Getenv("FEATURE_GATES"), "optional features, Key=true|false comma-separated (Karpenter's syntax; default $FEATURE_GATES): SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer, NodeRepair (all default false)")
		profiling    = flag.Bool("enable-profiling", os.Getenv("ENABLE_PROFILING") == "true", "serve Go's /debug/pprof/ on --metrics-addr (default $ENABLE_PROFILING, as Karpenter's)")
		cpuProfile   = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
		memProfile   = flag.String("memprofile", "", "write a heap profile to this file on exit (go tool pprof)")
	)
	// mTLS, API key and payload encryption: flags, defaults from the
	// environment (TEMPORAL_TLS_*, TEMPORAL_API_KEY, JOINERY_CODEC_*).
	tsec := temporal.FromEnv(os.Getenv)
	tsec.BindFlags(flag.CommandLine)
	flag.Parse()
	// Refuse a half-configured TLS setup (or an unreadable keyring) before
	// anything starts.
	tsec.HostPort, tsec.Namespace = *temporalAddr, *namespace
	if _, err := temporal.Load(tsec); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	featureGates, err := controller.ParseFeatureGates(*gates)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if err := activities.ValidateMinValuesPolicy(*minValues); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	spreadDefaults, err := loadSchedulerConfig(*schedConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	err = run(*kubeconfig, controller.Config{
		Connection: controller.Connection{TemporalAddress: *temporalAddr, Namespace: *namespace, Temporal: tsec,
			EC2Endpoint: *ec2Endpoint, Region: *region, SQSEndpoint: *sqsEndpoint,
			SSMEndpoint: *ssmEndpoint, IAMEndpoint: *iamEndpoint, EKSEndpoint: *eksEndpoint, PricingEndpoint: *pricingURL},
		Cluster: controller.Cluster{ClusterName: *clusterName, LeaseNamespace: *leaseNS,
			ClusterEndpoint: *apiEndpoint, ClusterCABundle: *caBundle, ServiceCIDR: *serviceCIDR, ClusterDNS: *clusterDNS},
		Features: controller.Features{LeaderElect: *leaderElect, InterruptionQueue: *queue, InterruptionRebalanceDrain: *rebalance,
			DisableDisruption: !*disruption, DisableSchedulerHints: !*hintsOn, FeatureGates: featureGates, SpreadDefaults: spreadDefaults, MinValuesPolicy: *minValues},
		Tuning:      controller.Tuning{SolverBudget: *budget, OfferingsRefresh: *offersEvery, SpotPriceRefresh: *spotEvery, PricingRefresh: *priceEvery},
		MetricsAddr: *metricsAddr, Profiling: *profiling,
	}, *dev, *level)
	stopProfiles()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// loadSchedulerConfig reads --scheduler-config (nil for none).
func loadSchedulerConfig(path string) (solver.SpreadDefaults, error) {
	if path == "" {
		return nil, nil
	}
	return schedulerconfig.Load(path)
}

func run(kubeconfig string, cfg controller.Config, dev bool, level string) error {
	log, err := logging.New(dev, level)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck
	var rc *rest.Config
	if kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("kubernetes config: %w", err)
	}
	cfg.RESTConfig, cfg.Log = rc, log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return controller.Run(ctx, cfg)
}

// envOr is the environment variable's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
