// Command bench is a test harness, not part of what Joinery ships: it
// measures the whole provisioning path on the local world (the worker
// command in its own process, sim/world around it). It applies
// Deployments totalling --pods pods of mixed shapes over the example
// NodePools (plus a DaemonSet) and reports the time from apply to the
// first Provision workflow, to every NodeClaim launched, every Node Ready
// and every pod Running, the nodes and $/hour against the solver's lower
// bound, peak RSS, workflow counts and EC2 calls.
//
//	go run ./sim/bench --pods 1000 [--json]
//
// TestBenchSmoke (200 pods, -tags integration) runs it in hack/test.sh;
// the figures it prints go to docs/performance.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/joinery/joinery/internal/logging"
	cluster "github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kube"
	"github.com/joinery/joinery/sim/world"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// systemNodes is world.Options.SystemNodes for the bench's world.
var systemNodes = world.DefaultSystemNodes

func main() {
	pods := flag.Int("pods", 1000, "pods to provision (1000, 5000, 10000)")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	pending := flag.Duration("boot-delay", world.EKSBoot.Pending, "how long a new instance stays pending before EC2 reports it running")
	register := flag.Duration("boot-register", world.EKSBoot.Register, "from running until the kubelet registers its Node NotReady")
	network := flag.Duration("boot-network", world.EKSBoot.NetworkReady, "from registration until the CNI is up and the Node is Ready")
	fastBoot := flag.Bool("fast-boot", false, "boot nodes in about 3 s (1 s per phase) instead of EKS's 40-60 s")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	keep := flag.Bool("keep", false, "keep the state directory (logs: joinery.log is the worker's) and print its path")
	cpuProfile := flag.String("cpuprofile", "", "write the worker's CPU profile to this file (go tool pprof -top <file>)")
	heapProfile := flag.String("heapprofile", "", "write the worker's heap profile, taken as it stops, to this file (go tool pprof -sample_index=inuse_space -top <file>)")
	rest := flag.Duration("rest", time.Minute, "once every pod runs, how long to measure the worker's CPU with nothing pending (0: not at all)")
	restProfile := flag.String("rest-profile", "", "write a CPU profile of the worker over the --rest window (every pod Running) to this file")
	schedProfile := flag.String("scheduler-profile", "", "write a CPU profile of the kube-scheduler, over 60 s from a minute after the apply, to this file")
	extra := flag.String("worker-flags", "", "extra worker flags, space-separated (e.g. --scheduler-hints=false)")
	floor := flag.Bool("control-plane-floor", false, "run no worker: report how long the local control plane takes to create the pods and mark them all Unschedulable")
	flag.IntVar(&systemNodes, "system-nodes", systemNodes, "nodes of a managed node group (tainted CriticalAddonsOnly) the cluster has before the burst, as a cluster running an autoscaler does")
	flag.Parse()
	if *cpuProfile != "" && *restProfile != "" {
		fmt.Fprintln(os.Stderr, "error: --cpuprofile and --rest-profile cannot both be given (Go runs one CPU profile at a time)")
		os.Exit(2)
	}
	workerFlags = strings.Fields(*extra)
	var report interface{ print() }
	var err error
	if *floor {
		report, err = runFloor(*pods, *timeout)
	} else {
		boot := world.BootPhases{Pending: *pending, Register: *register, NetworkReady: *network}
		if *fastBoot {
			boot = fastPhases
		}
		report, err = run(*pods, boot, *timeout, *rest, *keep, profiles{CPU: absPath(*cpuProfile), Heap: absPath(*heapProfile), Scheduler: absPath(*schedProfile), Rest: absPath(*restProfile)})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if *asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(report)
		return
	}
	report.print()
}

// absPath makes a profile path absolute (the worker runs in another
// directory); "" stays "".
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// fastPhases boot a node in about 3 s: the smoke test's and --fast-boot's.
var fastPhases = world.BootPhases{Pending: time.Second, Register: time.Second, NetworkReady: time.Second}

// startWorld starts the bench's local world (fixed ports of its own) with
// the example NodePools, state in dir.
func startWorld(ctx context.Context, dir string, boot world.BootPhases) (*world.World, error) {
	log, err := logging.NewFile(filepath.Join(dir, "world.log"), "warn")
	if err != nil {
		return nil, err
	}
	w, err := world.Start(ctx, world.Options{
		StateDir: dir, Boot: boot, SystemNodes: systemNodes, TemporalPort: 30233, UIPort: -1, Progress: os.Stderr, Log: log, ClusterName: "joinery-bench",
		KubePorts: kube.Ports{Etcd: 30790, EtcdPeer: 30791, APIServer: 30443, Scheduler: 30459, ControllerManager: 30457, Kwok: 30480},
	})
	if err != nil {
		return nil, err
	}
	pools, err := cluster.ReadManifests(repoFile("examples/nodepools.yaml"))
	if err == nil {
		err = cluster.Apply(ctx, w.Kube.RESTConfig(), pools)
	}
	if err != nil {
		w.Stop()
		return nil, err
	}
	return w, nil
}

func runFloor(pods int, timeout time.Duration) (*Floor, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "joinery-bench-floor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	w, err := startWorld(ctx, dir, fastPhases)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	return measureFloor(ctx, w, pods)
}

func run(pods int, boot world.BootPhases, timeout, rest time.Duration, keep bool, prof profiles) (*Report, error) {
	sig, stopSig := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSig()
	ctx, cancel := context.WithTimeout(sig, timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "joinery-bench-")
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "state kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	exe, err := buildWorker(dir)
	if err != nil {
		return nil, err
	}
	w, err := startWorld(ctx, dir, boot)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	worker, err := startWorker(ctx, w, exe, metricsAddr, prof)
	if err != nil {
		return nil, err
	}
	defer worker.stop()
	if prof.Scheduler != "" {
		go func() {
			if err := fetchProfile(ctx, w.Kube.SchedulerURL(), prof.Scheduler, time.Minute, time.Minute); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "kube-scheduler profile:", err)
			}
		}()
	}
	qctx, stopQueue := context.WithCancel(ctx)
	queue := make(chan []QueueSample, 1)
	go func() { queue <- sampleQueue(qctx, w.Kube.SchedulerURL(), 10*time.Second) }()
	r, err := measure(ctx, w, pods, worker.cmd.Process.Pid)
	stopQueue()
	if err != nil {
		return nil, err
	}
	r.SchedulerQueue = <-queue
	if r.SchedulerAttempts, err = schedulerAttempts(w.Kube.SchedulerURL()); err != nil {
		return nil, err
	}
	if r.SchedulerRequeues, err = requeues(w.Kube.SchedulerURL()); err != nil {
		return nil, err
	}
	r.BootP50, r.BootMax = bootFigures(w.BootTimes())
	r.ActivityLatency, r.WorkflowLatency, err = latencies(metricsAddr)
	if err == nil && rest > 0 {
		profiled := make(chan error, 1)
		go func() {
			if prof.Rest == "" {
				profiled <- nil
				return
			}
			profiled <- fetchProfile(ctx, "http://"+metricsAddr, prof.Rest, 0, rest)
		}()
		r.RestCPUShare, err = restCPU(ctx, worker.cmd.Process.Pid, rest)
		if perr := <-profiled; perr != nil {
			fmt.Fprintln(os.Stderr, "worker profile at rest:", perr) // the figures stand without it
		}
	}
	return r, err
}

// restCPU is the share of one core the worker uses over d, measured from
// now (every pod runs, nothing is pending).
func restCPU(ctx context.Context, pid int, d time.Duration) (float64, error) {
	before, start := cpuSeconds(pid), time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	return (cpuSeconds(pid) - before) / time.Since(start).Seconds(), nil
}

// freeAddr is a loopback address with a port free right now (the worker's
// /metrics): a fixed port can be taken by another world's ephemeral ports.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
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

// Report holds the measured figures (durations from the apply, except
// the *AfterLastPod ones: from the creation of the last pod, which the
// ReplicaSet controller paces).
type Report struct {
	Pods                 int           `json:"pods"`
	LastPodCreated       time.Duration `json:"lastPodCreated"`
	FirstProvision       time.Duration `json:"firstProvision"`
	AllLaunched          time.Duration `json:"allLaunched"`
	AllNodesReady        time.Duration `json:"allNodesReady"`
	AllPodsRunning       time.Duration `json:"allPodsRunning"`
	LaunchedAfterLastPod time.Duration `json:"launchedAfterLastPod"`
	// LastPodMarked is when the last pod was first marked Unschedulable
	// (seen by the bench's informer); LaunchedAfterLastMarked, the
	// headline, counts from there: the time that is Joinery's.
	LastPodMarked           time.Duration `json:"lastPodMarked"`
	LaunchedAfterLastMarked time.Duration `json:"launchedAfterLastMarked"`
	RunningAfterLastPod     time.Duration `json:"runningAfterLastPod"`
	WorkerPeakRSSMiB        float64       `json:"workerPeakRssMiB"`
	Nodes                   int           `json:"nodes"`
	USDPerHour              float64       `json:"usdPerHour"`
	LowerBound              float64       `json:"lowerBoundUsdPerHour"`
	// SingleBatchUSD and SingleBatchNodes are the plan of every pod in one
	// batch (the solver's default search on the same input as the bound):
	// what the burst would cost if it were planned at once.
	SingleBatchUSD   float64 `json:"singleBatchUsdPerHour"`
	SingleBatchNodes int     `json:"singleBatchNodes"`
	// PlannedUSD is the sum of the run's provisioning plans (the worker's
	// log): against SingleBatchUSD, what splitting the burst cost; against
	// USDPerHour, what launches falling back from the plan's cheapest
	// offering cost.
	PlannedUSD       float64        `json:"plannedUsdPerHour"`
	ProvisionRuns    int            `json:"provisionWorkflows"`
	NodeClaimRuns    int            `json:"nodeClaimWorkflows"`
	FailedWorkflows  int            `json:"failedWorkflows"` // Failed, Terminated or TimedOut
	LimitWarnings    int            `json:"limitWarnings"`   // log lines reporting a Temporal size limit hit
	EC2Calls         map[string]int `json:"ec2Calls"`
	Fleets           FleetFigures   `json:"createFleet"`
	PeakRSSMiB       float64        `json:"peakRssMiB"` // this process: Temporal server + sims
	KubeAPIServerMiB float64        `json:"kubeApiserverRssMiB"`
	// BootP50 and BootMax: launch -> Node Ready per node, as the local
	// world's nodes boot.
	BootP50 time.Duration `json:"bootP50"`
	BootMax time.Duration `json:"bootMax"`
	// CPUSeconds is the CPU time each process used from the apply until
	// every pod ran (all share the machine's cores).
	CPUSeconds map[string]float64 `json:"cpuSeconds"`
	// RestCPUShare is the share of one core the worker used over the rest
	// window that follows, with every pod running (0: not measured).
	RestCPUShare float64 `json:"restCpuShare"`
	// SchedulerAttempts are the kube-scheduler's scheduling attempts by
	// result, and "preemption" its preemption attempts, until every pod ran.
	SchedulerAttempts map[string]float64 `json:"schedulerAttempts"`
	// SchedulerRequeues counts the pods moved into the kube-scheduler's
	// queues by the event that moved them, until every pod ran.
	SchedulerRequeues map[string]float64 `json:"schedulerRequeues"`
	// SchedulerQueue samples the kube-scheduler's queue every 10 s.
	SchedulerQueue  []QueueSample   `json:"schedulerQueue"`
	ActivityLatency []Latency       `json:"activityLatency"`
	WorkflowLatency []Latency       `json:"workflowLatency"`
	Provisions      []ProvisionSpan `json:"provisions"`
}

func (r *Report) print() {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pods\t%d\n", r.Pods)
	fmt.Fprintf(tw, "last pod marked Unschedulable -> every NodeClaim launched\t%s\n", r.LaunchedAfterLastMarked.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> last pod created\t%s\n", r.LastPodCreated.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> last pod marked Unschedulable\t%s\n", r.LastPodMarked.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> first Provision workflow\t%s\n", r.FirstProvision.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every NodeClaim launched\t%s\n", r.AllLaunched.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every Node Ready\t%s\n", r.AllNodesReady.Round(time.Millisecond))
	fmt.Fprintf(tw, "apply -> every pod Running\t%s\n", r.AllPodsRunning.Round(time.Millisecond))
	fmt.Fprintf(tw, "last pod created -> every NodeClaim launched\t%s\n", r.LaunchedAfterLastPod.Round(time.Millisecond))
	fmt.Fprintf(tw, "last pod created -> every pod Running\t%s\n", r.RunningAfterLastPod.Round(time.Millisecond))
	fmt.Fprintf(tw, "nodes; boot (launch -> Ready) p50, max\t%d; %s, %s\n", r.Nodes, r.BootP50.Round(100*time.Millisecond), r.BootMax.Round(100*time.Millisecond))
	fmt.Fprintf(tw, "USD/hour (lower bound, ratio)\t%.2f (%.2f, %.2f)\n", r.USDPerHour, r.LowerBound, r.USDPerHour/max(r.LowerBound, 1e-9))
	fmt.Fprintf(tw, "single-batch plan: USD/hour, nodes; the run over it\t%.2f, %d; %.3f\n", r.SingleBatchUSD, r.SingleBatchNodes, r.USDPerHour/max(r.SingleBatchUSD, 1e-9))
	fmt.Fprintf(tw, "the run's plans: USD/hour; over the single-batch plan\t%.2f; %.3f\n", r.PlannedUSD, r.PlannedUSD/max(r.SingleBatchUSD, 1e-9))
	fmt.Fprintf(tw, "Provision / NodeClaim workflows\t%d / %d\n", r.ProvisionRuns, r.NodeClaimRuns)
	fmt.Fprintf(tw, "failed workflows / Temporal limit warnings\t%d / %d\n", r.FailedWorkflows, r.LimitWarnings)
	fmt.Fprintf(tw, "EC2 calls\t%v\n", r.EC2Calls)
	fmt.Fprintf(tw, "CreateFleet: calls, throttled, distinct requests; first, last from the apply\t%d, %d, %d; %s, %s\n",
		r.Fleets.Calls, r.Fleets.Throttled, r.Fleets.Distinct, r.Fleets.First.Round(100*time.Millisecond), r.Fleets.Last.Round(100*time.Millisecond))
	fmt.Fprintf(tw, "peak RSS: worker / Temporal server+sims / kube-apiserver\t%.0f MiB / %.0f MiB / %.0f MiB\n", r.WorkerPeakRSSMiB, r.PeakRSSMiB, r.KubeAPIServerMiB)
	var cpu []string
	for _, name := range cpuUse {
		if sec, ok := r.CPUSeconds[name]; ok {
			cpu = append(cpu, fmt.Sprintf("%s %.1f", name, sec))
		}
	}
	fmt.Fprintf(tw, "CPU seconds, apply -> every pod Running\t%s\n", strings.Join(cpu, ", "))
	if r.RestCPUShare > 0 {
		fmt.Fprintf(tw, "worker CPU at rest (every pod Running), share of a core\t%.2f%%\n", 100*r.RestCPUShare)
	}
	fmt.Fprintf(tw, "kube-scheduler attempts: scheduled, unschedulable, error; preemption\t%.0f, %.0f, %.0f; %.0f\n",
		r.SchedulerAttempts["scheduled"], r.SchedulerAttempts["unschedulable"], r.SchedulerAttempts["error"], r.SchedulerAttempts["preemption"])
	events := slices.Sorted(maps.Keys(r.SchedulerRequeues))
	slices.SortStableFunc(events, func(a, b string) int { return cmp.Compare(r.SchedulerRequeues[b], r.SchedulerRequeues[a]) })
	var moved []string
	for _, e := range events {
		moved = append(moved, fmt.Sprintf("%s %.0f", e, r.SchedulerRequeues[e]))
	}
	fmt.Fprintf(tw, "kube-scheduler: pods moved into its queues, by event\t%s\n", strings.Join(moved, ", "))
	for _, q := range r.SchedulerQueue {
		fmt.Fprintf(tw, "kube-scheduler at %s: queue active, backoff, unschedulable; attempts so far scheduled, unschedulable\t%.0f, %.0f, %.0f; %.0f, %.0f\n",
			q.At, q.Active, q.Backoff, q.Unschedulable, q.Scheduled, q.Failed)
	}
	for _, l := range r.WorkflowLatency {
		fmt.Fprintf(tw, "workflow %s: runs, p50, p99\t%d, %.3fs, %.3fs\n", l.Type, l.Count, l.P50, l.P99)
	}
	for _, l := range r.ActivityLatency {
		fmt.Fprintf(tw, "activity %s: runs, p50, p99\t%d, %.3fs, %.3fs\n", l.Type, l.Count, l.P50, l.P99)
	}
	for _, p := range r.Provisions {
		fmt.Fprintf(tw, "%s: from the apply, NodeClaims\t%s -> %s, %d\n", p.ID, p.Start.Round(100*time.Millisecond), p.Close.Round(100*time.Millisecond), p.NodeClaims)
	}
	_ = tw.Flush()
}

// bootFigures are the median and longest of the nodes' boot times (sorted).
func bootFigures(took []time.Duration) (p50, longest time.Duration) {
	if len(took) == 0 {
		return 0, 0
	}
	return took[len(took)/2], took[len(took)-1]
}
