package world

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/logging"
	"k8s.io/client-go/tools/clientcmd"
)

// WorkerEnvFlag, set to 1, makes a re-executed test or tool binary run
// only the controller against the world described by the other
// JOINERY_WORKER_* variables, as the `worker` main would: crash tests
// SIGKILL that process and start another.
const WorkerEnvFlag = "JOINERY_WORKER"

// WorkerEnv is the environment such a process needs to reach this world;
// its JSON log goes to <StateDir>/joinery.log.
func (w *World) WorkerEnv(clusterName string) []string {
	return []string{
		WorkerEnvFlag + "=1",
		"JOINERY_WORKER_KUBECONFIG=" + w.Kube.Kubeconfig(),
		"JOINERY_WORKER_TEMPORAL=" + w.Temporal.Address,
		"JOINERY_WORKER_EC2=" + w.EC2Endpoint,
		"JOINERY_WORKER_SQS=" + w.SQSEndpoint,
		"JOINERY_WORKER_SSM=" + w.SSMEndpoint,
		"JOINERY_WORKER_IAM=" + w.IAMEndpoint,
		"JOINERY_WORKER_EKS=" + w.EKSEndpoint,
		"JOINERY_WORKER_PRICING=" + w.PricingEndpoint,
		"JOINERY_WORKER_REGION=" + w.Region,
		"JOINERY_WORKER_QUEUE=" + w.InterruptionQueueURL,
		"JOINERY_WORKER_LOG=" + filepath.Join(w.StateDir, "joinery.log"),
		"JOINERY_WORKER_CLUSTER=" + clusterName,
		// The worker's key, as a pod gets it; the SDK reads it.
		"AWS_ACCESS_KEY_ID=" + WorkerAccessKeyID, "AWS_SECRET_ACCESS_KEY=" + WorkerSecretAccessKey,
	}
}

// WorkerArgs are the flags of the worker command (./worker) that reach
// this world; its log goes to the command's stderr. Run it with
// WorkerKeyEnv in its environment (its AWS key).
func (w *World) WorkerArgs(clusterName string) []string {
	return []string{
		"--kubeconfig", w.Kube.Kubeconfig(), "--temporal-address", w.Temporal.Address,
		"--ec2-endpoint", w.EC2Endpoint, "--sqs-endpoint", w.SQSEndpoint, "--interruption-queue", w.InterruptionQueueURL,
		"--ssm-endpoint", w.SSMEndpoint, "--iam-endpoint", w.IAMEndpoint, "--eks-endpoint", w.EKSEndpoint,
		"--pricing-endpoint", w.PricingEndpoint, "--region", w.Region, "--cluster-name", clusterName,
	}
}

// RunWorkerFromEnv runs the controller configured by WorkerEnv until
// SIGTERM and returns the exit code; tune adjusts the configuration.
// JOINERY_WORKER_GC_INTERVAL, JOINERY_WORKER_GC_GRACE and
// JOINERY_WORKER_DISRUPTION_INTERVAL (Go durations) shorten the
// garbage-collection and consolidation passes for tests, and
// JOINERY_WORKER_SOLVER_BUDGET sets the solver's budget (negative: the
// whole search, the same plan for the same input on any machine);
// JOINERY_WORKER_METRICS serves /metrics there; JOINERY_WORKER_FEATURE_GATES,
// JOINERY_WORKER_REPAIR_INTERVAL and JOINERY_WORKER_REPAIR_SCALE are the
// feature gates and the repair watcher's tuning.
func RunWorkerFromEnv(tune func(*controller.Config)) int {
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("JOINERY_WORKER_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log, err := logging.NewFile(os.Getenv("JOINERY_WORKER_LOG"), "info")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := controller.Config{
		Connection: controller.Connection{RESTConfig: rc, TemporalAddress: os.Getenv("JOINERY_WORKER_TEMPORAL"),
			EC2Endpoint: os.Getenv("JOINERY_WORKER_EC2"), SQSEndpoint: os.Getenv("JOINERY_WORKER_SQS"),
			SSMEndpoint: os.Getenv("JOINERY_WORKER_SSM"), IAMEndpoint: os.Getenv("JOINERY_WORKER_IAM"), EKSEndpoint: os.Getenv("JOINERY_WORKER_EKS"),
			PricingEndpoint: os.Getenv("JOINERY_WORKER_PRICING"), Region: os.Getenv("JOINERY_WORKER_REGION")},
		Cluster:     controller.Cluster{ClusterName: os.Getenv("JOINERY_WORKER_CLUSTER")},
		Features:    controller.Features{InterruptionQueue: os.Getenv("JOINERY_WORKER_QUEUE")},
		Log:         log,
		MetricsAddr: os.Getenv("JOINERY_WORKER_METRICS"),
	}
	for env, d := range map[string]*time.Duration{
		"JOINERY_WORKER_GC_INTERVAL": &cfg.GCInterval, "JOINERY_WORKER_GC_GRACE": &cfg.GCLaunchGrace,
		"JOINERY_WORKER_DISRUPTION_INTERVAL": &cfg.DisruptionPassInterval, "JOINERY_WORKER_SOLVER_BUDGET": &cfg.SolverBudget,
	} {
		if v := os.Getenv(env); v != "" {
			if *d, err = time.ParseDuration(v); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", env, err)
				return 1
			}
		}
	}
	if err := repairFromEnv(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if tune != nil {
		tune(&cfg)
	}
	if err := controller.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// SetEndpoints points a controller configuration at this world's AWS
// endpoints (EC2, SQS, SSM, IAM, EKS, Pricing) and its region, with the
// worker's key.
func (w *World) SetEndpoints(cfg *controller.Config) {
	cfg.AWSKey = w.WorkerKey()
	cfg.EC2Endpoint, cfg.SQSEndpoint = w.EC2Endpoint, w.SQSEndpoint
	cfg.SSMEndpoint, cfg.IAMEndpoint, cfg.EKSEndpoint = w.SSMEndpoint, w.IAMEndpoint, w.EKSEndpoint
	cfg.PricingEndpoint, cfg.Region = w.PricingEndpoint, w.Region
}

// repairFromEnv reads the feature gates and the repair tuning.
func repairFromEnv(cfg *controller.Config) error {
	var err error
	if cfg.FeatureGates, err = controller.ParseFeatureGates(os.Getenv("JOINERY_WORKER_FEATURE_GATES")); err != nil {
		return err
	}
	if v := os.Getenv("JOINERY_WORKER_REPAIR_INTERVAL"); v != "" {
		if cfg.RepairInterval, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("JOINERY_WORKER_REPAIR_INTERVAL: %w", err)
		}
	}
	if v := os.Getenv("JOINERY_WORKER_REPAIR_SCALE"); v != "" {
		if cfg.RepairTolerationScale, err = strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("JOINERY_WORKER_REPAIR_SCALE: %w", err)
		}
	}
	return nil
}
