// Package world starts Joinery's local world: a real Kubernetes control
// plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager,
// kwok for kubelets), the Temporal server with its Web UI embedded in this
// process (SQLite on disk, or a PostgreSQL server's databases), and an EC2 endpoint on loopback serving the real
// instance catalog, whose running instances register as Nodes.
package world

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/cni"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/eks"
	"github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/sim/internal/delay"
	"github.com/joinery/joinery/sim/kube"
	"github.com/joinery/joinery/sim/kubelet"
	"github.com/joinery/joinery/sim/pricing"
	"github.com/joinery/joinery/sim/sqs"
	"github.com/joinery/joinery/sim/ssm"
	"github.com/joinery/joinery/sim/temporal"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// Options configures the local world; zero values take defaults.
type Options struct {
	// StateDir keeps etcd data, the Temporal SQLite file, PKI and logs so a
	// second start resumes (default .joinery).
	StateDir string
	// Fresh wipes StateDir first.
	Fresh bool
	// BootDelay is how long an instance is pending before EC2 reports it
	// running (default 2 s); Boot.Pending, when set, wins.
	BootDelay time.Duration
	// Boot sets the durations of a node's boot phases (zero fields:
	// defaults, negative: none).
	Boot BootPhases
	// NodeMemTotalMiB sets, per instance type, the memory the guest kernel
	// reports (the Node's memory capacity) in place of the local kubelet's
	// memory model: a type measured on a real node, or one that surprises.
	NodeMemTotalMiB map[string]int64
	// Consistency is EC2's read-after-write window (ec2.Options.Consistency):
	// a new instance, launch template or tag stays unknown to the API for
	// up to this long (default DefaultConsistency; negative: off).
	Consistency time.Duration
	// ProfilePropagation is how long a new instance profile, or a role
	// added to one, takes to reach EC2 (iam.Options.Propagation; default
	// DefaultProfilePropagation; negative: at once).
	ProfilePropagation time.Duration
	// DiscoveryTag is the karpenter.sh/discovery value on the local
	// subnets and security group (default "production-eks", as in the
	// example EC2NodeClass).
	DiscoveryTag string
	// TemporalPort / UIPort default to 7233 / 8233; EC2Addr to 127.0.0.1:0.
	TemporalPort, UIPort int
	EC2Addr              string
	// TemporalPostgres, when set, is a PostgreSQL DSN the embedded Temporal
	// server keeps its state in instead of StateDir's SQLite file (see
	// temporal.ParsePostgresDSN); Fresh wipes its databases too.
	TemporalPostgres string
	// KubePorts overrides the control-plane ports (zero fields: defaults).
	KubePorts kube.Ports
	// SQSAddr is where the SQS endpoint listens (default 127.0.0.1:0).
	// AdminAddr, when set (starter dev: 127.0.0.1:8234), serves the
	// loopback admin endpoint `starter simulate` talks to.
	SQSAddr, AdminAddr string
	// ClusterName is the EKS cluster name DescribeCluster answers for
	// (default "joinery-local", what starter dev passes as the controller's
	// cluster name).
	ClusterName string
	// CapacityReservations are On-Demand Capacity Reservations the local
	// EC2 holds (ec2.CapacityReservation: N instances of a type in a zone,
	// with tags an EC2NodeClass can select them by); a world resumed from
	// its state directory keeps the ones it had.
	CapacityReservations []ec2.CapacityReservation
	// PlacementGroups are placement groups the local EC2 holds (by name;
	// an EC2NodeClass's placementGroupSelector names one); a world resumed
	// from its state directory keeps the ones it had.
	PlacementGroups []ec2.PlacementGroup
	// Region is the AWS region the world runs as (default us-east-1): its
	// zones are the region's a, b and c, and in a region other than
	// us-east-1 every price (on-demand from the Pricing endpoint, spot
	// from EC2) is the embedded us-east-1 price times PriceFactor.
	Region string
	// PriceFactor scales prices outside us-east-1 (default
	// DefaultPriceFactor; ignored in us-east-1).
	PriceFactor float64
	// ThrottleScale sizes the token buckets the local EC2, SSM, IAM,
	// Pricing and SQS endpoints throttle with: AWS's documented defaults
	// times this factor (0: DefaultThrottleScale; negative: no throttling,
	// for a test that must not meet it). Above 1 the world would be kinder
	// than AWS.
	ThrottleScale float64
	// QueueDuplicates is the probability that the interruption queue
	// delivers a message twice, as a standard queue may (0:
	// DefaultQueueDuplicates; negative: never). Messages also come out of
	// order unless QueueInOrder.
	QueueDuplicates float64
	QueueInOrder    bool
	// IAMPolicy is the worker's IAM policy document, in
	// deploy/iam-policy.json's format (its placeholders are filled with
	// the world's partition, region, account, cluster, node role and
	// queue); nil: deploy/iam-policy.json. IAMPolicyName labels it in
	// refusals (e.g. the file name).
	IAMPolicy     []byte
	IAMPolicyName string
	// CNI is the aws-node DaemonSet's settings the local VPC CNI runs with
	// (zero: the CNI's defaults, WARM_ENI_TARGET=1).
	CNI cni.Settings
	// SystemNodes is how many nodes of a managed node group (tainted
	// CriticalAddonsOnly, labelled eks.amazonaws.com/nodegroup=system) the
	// cluster has before any workload, as a cluster running an autoscaler
	// does (DefaultSystemNodes).
	SystemNodes int
	// Progress receives human progress lines (building binaries, readiness).
	Progress io.Writer
	Log      *zap.Logger
}

// World is a running local world.
type World struct {
	Kube        *kube.Cluster
	Temporal    *temporal.Server
	EC2         *ec2.Server
	EC2Endpoint string // http://127.0.0.1:port
	// CNI gives pods their addresses from their node's subnet.
	CNI      *cni.CNI
	StateDir string
	// SQS serves the interruption queue (InterruptionQueueURL) at SQSEndpoint.
	SQS                  *sqs.Server
	SQSEndpoint          string
	InterruptionQueueURL string
	// IAM (instance profiles; EC2 consults it), SSM (the EKS image
	// parameters, backed by EC2's images) and EKS (DescribeCluster: the
	// kube-apiserver's URL, CA and service CIDR) on loopback.
	IAM         *iam.Server
	IAMEndpoint string
	SSM         *ssm.Server
	SSMEndpoint string
	EKS         *eks.Server
	EKSEndpoint string
	// Pricing serves the Price List API's GetProducts (on-demand prices).
	Pricing         *pricing.Server
	PricingEndpoint string
	// Region is the region the world runs as.
	Region string
	// Auth authenticates every call to the AWS endpoints and evaluates the
	// caller's policy: the worker's (WorkerKey) is Options.IAMPolicy, the
	// admin's (AdminKey) allows everything.
	Auth         *awsauth.Guard
	workerPolicy *policy.Policy
	// ClusterName is the EKS cluster the world is (Options.ClusterName).
	ClusterName string
	stopAWS     []func()
	// AdminAddr is the admin endpoint's host:port (empty: not served).
	AdminAddr     string
	interruptions interruptions
	boots         bootTimes
	stopEC2       func()
	ec2State      string
	cancel        context.CancelFunc
}

// Start brings every part up, in order: control plane and CRDs, Temporal,
// EC2 endpoint. On error, whatever started is stopped again.
func Start(ctx context.Context, o Options) (w *World, err error) {
	o = o.withDefaults()
	if err := o.checkThrottleScale(); err != nil {
		return nil, err
	}
	guard, workerPolicy, err := newGuard(o) // a bad policy fails before anything starts
	if err != nil {
		return nil, err
	}
	abs, err := prepareStateDir(ctx, o)
	if err != nil {
		return nil, err
	}
	w = &World{StateDir: abs, Region: o.Region, ClusterName: o.ClusterName, Auth: guard, workerPolicy: workerPolicy}
	defer func() {
		if err != nil {
			w.Stop()
		}
	}()
	if err := w.startControlPlane(ctx, o); err != nil {
		return w, err
	}
	if err := w.startEC2(o); err != nil {
		return w, err
	}
	if err := w.startAWS(o); err != nil {
		return w, err
	}
	if err := w.startInterruptions(o); err != nil {
		return w, err
	}
	if err := w.startSystemNodes(ctx, o); err != nil {
		return w, err
	}
	fmt.Fprintf(o.Progress, "joinery: local world up (%s): kube-apiserver %s, Temporal %s, Web UI %s, EC2 %s, SQS %s, SSM %s, IAM %s, EKS %s, Pricing %s\n",
		w.Region, w.Kube.Server(), w.Temporal.Address, w.Temporal.UIAddress, w.EC2Endpoint, w.SQSEndpoint, w.SSMEndpoint, w.IAMEndpoint, w.EKSEndpoint, w.PricingEndpoint)
	fmt.Fprintf(o.Progress, "joinery: every local AWS call is authenticated and evaluated; the worker (key %s) holds %s, the admin key %s may do anything\n",
		WorkerAccessKeyID, w.workerPolicy.Name, AdminAccessKeyID)
	return w, nil
}

// withDefaults fills the zero options.
func (o Options) withDefaults() Options {
	if o.StateDir == "" {
		o.StateDir = ".joinery"
	}
	if o.DiscoveryTag == "" {
		o.DiscoveryTag = "production-eks"
	}
	if o.EC2Addr == "" {
		o.EC2Addr = "127.0.0.1:0"
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.ClusterName == "" {
		o.ClusterName = "joinery-local"
	}
	o.Boot = o.Boot.withDefaults(o.BootDelay)
	o.Consistency = delay.OrDefault(o.Consistency, DefaultConsistency)
	o.ProfilePropagation = delay.OrDefault(o.ProfilePropagation, DefaultProfilePropagation)
	if o.Region == "us-east-1" {
		o.PriceFactor = 1
	} else if o.PriceFactor <= 0 {
		o.PriceFactor = DefaultPriceFactor
	}
	return o
}

// prepareStateDir returns the state folder's absolute path, created, and
// wiped first (with the Temporal PostgreSQL database) when o.Fresh.
func prepareStateDir(ctx context.Context, o Options) (string, error) {
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		return "", err
	}
	if o.Fresh {
		if err := Wipe(abs); err != nil {
			return "", err
		}
		if o.TemporalPostgres != "" {
			if err := temporal.WipePostgres(ctx, o.TemporalPostgres); err != nil {
				return "", err
			}
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", err
	}
	return abs, nil
}

// startControlPlane starts the Kubernetes control plane with the CRDs
// installed, then the Temporal server and Web UI.
func (w *World) startControlPlane(ctx context.Context, o Options) (err error) {
	abs := w.StateDir
	fmt.Fprintf(o.Progress, "joinery: starting Kubernetes control plane (state in %s)\n", filepath.Join(abs, "kube"))
	w.Kube, err = kube.Start(ctx, kube.Options{StateDir: filepath.Join(abs, "kube"), Ports: o.KubePorts, Log: o.Progress, Progress: o.Progress})
	if err != nil {
		return err
	}
	if err := kube.InstallCRDs(ctx, w.Kube.RESTConfig()); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	store := filepath.Join(abs, "temporal.db")
	if o.TemporalPostgres != "" {
		store = "PostgreSQL " + temporal.RedactDSN(o.TemporalPostgres)
	}
	fmt.Fprintf(o.Progress, "joinery: starting Temporal server + Web UI (%s)\n", store)
	w.Temporal, err = temporal.Start(ctx, temporal.Options{
		DBPath: filepath.Join(abs, "temporal.db"), Postgres: o.TemporalPostgres, FrontendPort: o.TemporalPort, UIPort: o.UIPort,
		SearchAttributes: workflows.SearchAttributeNames, LogFile: filepath.Join(abs, "temporal.log"),
	})
	return err
}

// startEC2 starts the EC2 endpoint (its instances restored from and
// saved every second to ec2.json) with the sim kubelet that registers
// the instances it runs as Nodes, and the IAM fake it checks profiles
// against.
func (w *World) startEC2(o Options) (err error) {
	rc := w.Kube.RESTConfig()
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	regCtx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.IAM = iam.New(iam.Options{AccountID: AccountID, Partition: awsauth.Partition(o.Region), Guard: w.Auth, Propagation: o.ProfilePropagation,
		ThrottleScale: o.throttleScale()})
	// The sim kubelet joins only nodes whose user data names this API server
	// and its CA, and learns an image's architecture and variant (GPU
	// drivers) from the EC2 endpoint's images.
	reg := &kubelet.Registrar{
		Kube: kc, Hardware: func(name string) (kubelet.Hardware, bool) { return w.hardware(name, o.NodeMemTotalMiB) }, Region: o.Region, Log: o.Log.Named("sim-kubelet"),
		ClusterEndpoint: w.Kube.Server(), ClusterCA: rc.TLSClientConfig.CAData,
		Image: w.imageAsSeenByNode, Boot: kubelet.Phases{Register: o.Boot.Register, NetworkReady: o.Boot.NetworkReady},
		Alive: w.instanceAlive, OnReady: w.boots.ready,
	}
	w.EC2 = ec2.New(ec2.Options{
		ClusterTag: o.DiscoveryTag, BootDelay: o.Boot.Pending, Region: o.Region, PriceFactor: o.PriceFactor, Consistency: o.Consistency,
		AccountID: AccountID, InstanceProfile: w.IAM.InstanceProfileARN, InstanceProfileHasRole: w.IAM.InstanceProfileHasRole, ThrottleScale: o.throttleScale(),
		OnRunning: func(i ec2.Instance) { _ = reg.Register(regCtx, asSeenByNode(i)) },
		Guard:     w.Auth, InstanceProfileRoles: w.IAM.InstanceProfileRoles,
	})
	w.EC2.SetReclaimHook(w.sendStateChange) // a capacity block's end
	w.boots.mu.Lock()
	w.boots.launch = func(id string) (time.Time, bool) { in, ok := w.EC2.Instance(id); return in.LaunchTime, ok }
	w.boots.mu.Unlock()
	ec2State := filepath.Join(w.StateDir, "ec2.json")
	if err := w.EC2.LoadState(ec2State); err != nil {
		return err
	}
	for _, r := range o.CapacityReservations {
		if _, err := w.EC2.EnsureCapacityReservation(r); err != nil {
			return err
		}
	}
	for _, g := range o.PlacementGroups {
		if _, err := w.EC2.EnsurePlacementGroup(g); err != nil {
			return fmt.Errorf("placement group %s: %w", g.Name, err)
		}
	}
	w.EC2Endpoint, w.stopEC2, err = w.EC2.Start(o.EC2Addr)
	if err != nil {
		return fmt.Errorf("ec2 endpoint: %w", err)
	}
	if w.CNI, err = w.startCNI(regCtx, kc, o); err != nil {
		return fmt.Errorf("vpc cni: %w", err)
	}
	if err := installEKSAddons(regCtx, kc); err != nil {
		return err
	}
	// The instances outlive this process in ec2.json, like etcd and Temporal state.
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-regCtx.Done():
				return
			case <-t.C:
				if err := w.EC2.SaveState(ec2State); err != nil {
					o.Log.Warn("saving ec2 state", zap.Error(err))
				}
			}
		}
	}()
	w.ec2State = ec2State
	return nil
}

// DefaultPriceFactor is how much dearer than us-east-1 the local world
// makes another region (Options.PriceFactor).
const DefaultPriceFactor = 1.1

// The local world's AWS delays (Options.Consistency,
// Options.ProfilePropagation): AWS publishes neither; these are the
// seconds usually seen, scaled down so a test pays a few of them. Each
// resource draws its own delay in [half, all] of the value.
const (
	DefaultConsistency        = 3 * time.Second
	DefaultProfilePropagation = 6 * time.Second
)

// Stop stops every part (EC2 endpoint, Temporal, control plane).
func (w *World) Stop() {
	if w.cancel != nil {
		w.cancel()
	}
	w.stopInterruptions()
	for _, stop := range w.stopAWS {
		stop()
	}
	if w.stopEC2 != nil {
		w.stopEC2()
		_ = w.EC2.SaveState(w.ec2State)
	}
	if w.Temporal != nil {
		w.Temporal.Stop()
	}
	if w.Kube != nil {
		_ = w.Kube.Stop()
	}
}

// startAWS starts the IAM, SSM and EKS endpoints on loopback ports.
func (w *World) startAWS(o Options) error {
	w.SSM = ssm.New(ssm.Options{Source: w.EC2.SSMParameter, Region: o.Region, AccountID: AccountID, Guard: w.Auth, ThrottleScale: o.throttleScale()})
	w.Pricing = pricing.New(pricing.Options{Region: o.Region, PriceFactor: o.PriceFactor, Guard: w.Auth, ThrottleScale: o.throttleScale()})
	w.EKS = eks.New(eks.Options{Region: o.Region, AccountID: AccountID, Guard: w.Auth, Cluster: eks.Cluster{
		Name: o.ClusterName, Endpoint: w.Kube.Server(), CAData: base64.StdEncoding.EncodeToString(w.Kube.RESTConfig().CAData),
		ServiceIPv4CIDR: kube.ServiceCIDR, Version: w.EC2.Options().KubernetesVersion,
	}})
	for _, part := range []struct {
		name string
		srv  interface {
			Start(string) (string, func(), error)
		}
		url *string
	}{{"iam", w.IAM, &w.IAMEndpoint}, {"ssm", w.SSM, &w.SSMEndpoint}, {"eks", w.EKS, &w.EKSEndpoint}, {"pricing", w.Pricing, &w.PricingEndpoint}} {
		url, stop, err := part.srv.Start("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("%s endpoint: %w", part.name, err)
		}
		*part.url = url
		w.stopAWS = append(w.stopAWS, stop)
	}
	return nil
}

// Wipe removes a state directory (what --fresh does).
func Wipe(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("wipe %s: %w", dir, err)
	}
	return nil
}
