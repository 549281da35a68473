package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/logging"
	cluster "github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kube"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config of one chaos run.
type Config struct {
	Sagas    int
	Seed     uint64
	StateDir string
	Examples string // folder with nodepools.yaml, workloads.yaml
	Timeout  time.Duration
	// SettleTimeout bounds the quiet phase after the last saga.
	SettleTimeout time.Duration
	// Quiet is how long consolidation must have done nothing before the checks.
	Quiet time.Duration
	// WorkerExe and WorkerArgs run the controller process (this binary, or
	// the test binary with -test.run=^$).
	WorkerExe  string
	WorkerArgs []string
	// Faults of the EC2 endpoint.
	ICEFraction, ThrottleFraction float64
	LatencyMin, LatencyMax        time.Duration
	// InterruptionNotice is the spot notice of simulated interruptions.
	InterruptionNotice time.Duration
	TemporalPort       int
	KubePorts          kube.Ports
	Progress           io.Writer
}

// DefaultConfig: 200 sagas under harsh EC2 faults (insufficient capacity,
// throttling, seconds of latency, two-minute spot notices), on ports apart
// from `starter dev` and the integration tests so they can run beside it.
func DefaultConfig() Config {
	return Config{
		Sagas: 200, Seed: 1, StateDir: ".joinery-chaos", Examples: "examples", Timeout: 90 * time.Minute,
		SettleTimeout: 6 * time.Minute, Quiet: 45 * time.Second,
		ICEFraction: 0.3, ThrottleFraction: 0.2, LatencyMin: time.Second, LatencyMax: 5 * time.Second,
		InterruptionNotice: 2 * time.Minute, TemporalPort: 27233,
		KubePorts: kube.Ports{Etcd: 28790, EtcdPeer: 28791, APIServer: 28443, Scheduler: 28459, ControllerManager: 28457, Kwok: 28480},
		Progress:  io.Discard,
	}
}

// Report is what the run measured and checked.
type Report struct {
	Seed             uint64         `json:"seed"`
	SagasWanted      int            `json:"sagasWanted"`
	Sagas            map[string]int `json:"sagas"` // provisioning, drain, consolidation, interruption
	SagasTotal       int            `json:"sagasTotal"`
	WorkerKills      int            `json:"workerKills"`
	TemporalRestarts int            `json:"temporalRestarts"`
	ScaleChanges     int            `json:"scaleChanges"`
	DrainsStarted    int            `json:"drainsStarted"`
	Interruptions    int            `json:"interruptionsSent"`
	EC2Calls         int            `json:"ec2Calls"`
	EC2Throttled     int            `json:"ec2Throttled"`
	ICEEvents        int            `json:"insufficientCapacityPools"`
	Latency          string         `json:"latency"`
	ChaosTime        string         `json:"chaosTime"`
	SettleTime       string         `json:"settleTime"`
	TotalTime        string         `json:"totalTime"`
	PDBMinReady      int            `json:"pdbMinReady"`
	PDBSamples       int            `json:"pdbSamples"`
	// PDBReclaimMinReady is the fewest Ready within a spot reclaim's
	// window (-1: no sample there).
	PDBReclaimMinReady int            `json:"pdbReclaimMinReady"`
	FinalPods          int            `json:"finalPods"`
	FinalNodes         int            `json:"finalNodes"`
	FinalUSDPerHour    float64        `json:"finalUSDPerHour"`
	PlanUSDPerHour     float64        `json:"planUSDPerHour"`
	Workflows          map[string]int `json:"workflowsByStatus"`
	Invariants         []Invariant    `json:"invariants"`
	Passed             bool           `json:"passed"`
}

// Invariant is one checked property.
type Invariant struct {
	Name    string   `json:"name"`
	OK      bool     `json:"ok"`
	Figure  string   `json:"figure"`
	Details []string `json:"details,omitempty"`
}

// Print writes the report as tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "chaos run, seed %d\n", r.Seed)
	rows := [][2]string{
		{"sagas done / wanted", fmt.Sprintf("%d / %d", r.SagasTotal, r.SagasWanted)},
		{"  provisioning NodeClaims", fmt.Sprint(r.Sagas["provisioning"])},
		{"  manual drains", fmt.Sprint(r.Sagas["drain"])},
		{"  consolidation disruptions", fmt.Sprint(r.Sagas["consolidation"])},
		{"  interruptions", fmt.Sprint(r.Sagas["interruption"])},
		{"worker SIGKILLs", fmt.Sprint(r.WorkerKills)},
		{"Temporal server restarts", fmt.Sprint(r.TemporalRestarts)},
		{"scale changes / drains started / interruptions sent", fmt.Sprintf("%d / %d / %d", r.ScaleChanges, r.DrainsStarted, r.Interruptions)},
		{"EC2 calls / throttled (RequestLimitExceeded)", fmt.Sprintf("%d / %d", r.EC2Calls, r.EC2Throttled)},
		{"CreateFleet pools refused (InsufficientInstanceCapacity)", fmt.Sprint(r.ICEEvents)},
		{"EC2 latency", r.Latency},
		{"time: chaos / settle / total", fmt.Sprintf("%s / %s / %s", r.ChaosTime, r.SettleTime, r.TotalTime)},
		{"PDB workload-sample: min Ready (minAvailable 8), samples", fmt.Sprintf("%d, %d", r.PDBMinReady, r.PDBSamples)},
		{"  min Ready around a spot reclaim (involuntary, not counted)", fmt.Sprintf("%d", r.PDBReclaimMinReady)},
		{"final pods / nodes", fmt.Sprintf("%d / %d", r.FinalPods, r.FinalNodes)},
		{"final USD/hour vs solver plan", fmt.Sprintf("%.4f vs %.4f", r.FinalUSDPerHour, r.PlanUSDPerHour)},
		{"workflows by status", fmtCounts(r.Workflows)},
	}
	for _, row := range rows {
		fmt.Fprintf(w, "  %-58s %s\n", row[0], row[1])
	}
	fmt.Fprintf(w, "invariants\n")
	for _, in := range r.Invariants {
		res := "PASS"
		if !in.OK {
			res = "FAIL"
		}
		fmt.Fprintf(w, "  %-4s %-40s %s\n", res, in.Name, in.Figure)
		for i, d := range in.Details {
			if i == 10 {
				fmt.Fprintf(w, "         ... %d more\n", len(in.Details)-10)
				break
			}
			fmt.Fprintf(w, "         %s\n", d)
		}
	}
	if r.Passed {
		fmt.Fprintln(w, "result: PASS")
	} else {
		fmt.Fprintln(w, "result: FAIL")
	}
}

func fmtCounts(m map[string]int) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

var nodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

type run struct {
	cfg   Config
	rep   *Report
	rng   *rand.Rand
	w     *world.World
	kc    kubernetes.Interface
	dc    dynamic.Interface
	tc    client.Client
	log   *zap.Logger
	prog  io.Writer
	dir   string
	inf   informers.SharedInformerFactory
	pods  cache.Indexer
	nodes cache.Indexer

	worker   *workerProc
	workerMu sync.Mutex

	mu         sync.Mutex
	lost       []string
	pdbMin     int
	pdbSamples int
	pdbBad     []string
	// pdbReclaimMin is the fewest Ready within a spot reclaim's window.
	pdbReclaimMin int
	sampling      bool
	drains        []client.WorkflowRun
	reclaimBy     time.Time
	reclaims      map[string]time.Time // interrupted node -> reclaim
	inflate       int
}

func (r *run) logf(format string, args ...interface{}) {
	fmt.Fprintf(r.prog, "chaos %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Run starts the local world, runs the chaos and checks the invariants. A
// non-nil report comes back once the world started, even with an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	dir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	if err := world.Wipe(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := logging.NewFile(filepath.Join(dir, "chaos.log"), "info")
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6368616f73)), log: log, prog: cfg.Progress, dir: dir, pdbMin: -1, pdbReclaimMin: -1,
		rep: &Report{Seed: cfg.Seed, SagasWanted: cfg.Sagas, Sagas: map[string]int{}, Workflows: map[string]int{}}}
	r.w, err = world.Start(ctx, world.Options{
		StateDir: dir, BootDelay: time.Second, TemporalPort: cfg.TemporalPort, UIPort: -1,
		KubePorts: cfg.KubePorts, Progress: cfg.Progress, Log: log, ClusterName: "joinery-chaos",
	})
	if err != nil {
		return nil, err
	}
	defer r.w.Stop()
	if r.kc, err = kubernetes.NewForConfig(r.w.Kube.RESTConfig()); err != nil {
		return nil, err
	}
	if r.dc, err = dynamic.NewForConfig(r.w.Kube.RESTConfig()); err != nil {
		return nil, err
	}
	if r.tc, err = client.Dial(client.Options{HostPort: r.w.Temporal.Address, Logger: logging.NewTemporal(log)}); err != nil {
		return nil, err
	}
	defer r.tc.Close()
	if err := r.startWorker(); err != nil {
		return nil, err
	}
	defer func() {
		r.workerMu.Lock()
		if r.worker != nil {
			r.worker.kill()
		}
		r.workerMu.Unlock()
	}()
	r.watch(ctx)
	if err := r.apply(ctx); err != nil {
		return nil, err
	}
	chaosStart := time.Now()
	err = r.chaos(ctx)
	r.rep.ChaosTime = time.Since(chaosStart).Round(time.Second).String()
	if err != nil {
		r.logf("chaos phase ended early: %v", err)
	}
	settleStart := time.Now()
	r.settle(ctx)
	r.rep.SettleTime = time.Since(settleStart).Round(time.Second).String()
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer ccancel()
	r.check(cctx)
	r.rep.TotalTime = time.Since(start).Round(time.Second).String()
	if err != nil {
		r.rep.Invariants = append(r.rep.Invariants, Invariant{Name: "chaos phase completed", Figure: err.Error()})
		r.rep.Passed = false
	}
	return r.rep, nil
}

func (r *run) startWorker() error {
	r.workerMu.Lock()
	defer r.workerMu.Unlock()
	wp, err := startWorker(r.cfg.WorkerExe, r.cfg.WorkerArgs, r.w.WorkerEnv(chaosCluster))
	if err != nil {
		return err
	}
	r.worker = wp
	return nil
}

func (r *run) killWorker() {
	r.workerMu.Lock()
	defer r.workerMu.Unlock()
	if r.worker != nil {
		r.worker.kill()
		r.worker = nil
	}
}

// ensureWorker restarts a worker that exited by itself (e.g. Temporal was
// unreachable while it started).
func (r *run) ensureWorker() {
	r.workerMu.Lock()
	dead := r.worker == nil || r.worker.exited()
	r.workerMu.Unlock()
	if dead {
		r.logf("worker not running: starting it")
		if err := r.startWorker(); err != nil {
			r.logf("start worker: %v", err)
		}
	}
}

// apply creates the NodePools and two workloads of the examples: inflate
// (1 CPU pods, scaled up and down) and workload-sample with its PDB.
func (r *run) apply(ctx context.Context) error {
	objs, err := cluster.ReadManifests(filepath.Join(r.cfg.Examples, "nodepools.yaml"), filepath.Join(r.cfg.Examples, "workloads.yaml"))
	if err != nil {
		return err
	}
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "NodePool" && o.GetName() == "general-purpose":
			_ = unstructured.SetNestedField(o.Object, "5s", "spec", "disruption", "consolidateAfter")
			keep = append(keep, o)
		case o.GetKind() == "NodePool" || o.GetKind() == "EC2NodeClass":
			keep = append(keep, o)
		case o.GetName() == "inflate":
			r.inflate = 20
			_ = unstructured.SetNestedField(o.Object, int64(r.inflate), "spec", "replicas")
			keep = append(keep, o)
		case o.GetName() == "workload-sample":
			keep = append(keep, o)
		}
	}
	if err := cluster.Apply(ctx, r.w.Kube.RESTConfig(), keep); err != nil {
		return err
	}
	r.logf("applied NodePools, inflate (%d) and workload-sample (10, PDB minAvailable 8)", r.inflate)
	return nil
}

// watch keeps informers on pods and nodes: a pod that disappears after its
// node is gone, without having been deleted while the node existed, is
// lost; workload-sample's Ready pods are sampled every 100 ms.
func (r *run) watch(ctx context.Context) {
	r.inf = informers.NewSharedInformerFactory(r.kc, 0)
	pi := r.inf.Core().V1().Pods().Informer()
	ni := r.inf.Core().V1().Nodes().Informer()
	r.pods, r.nodes = pi.GetIndexer(), ni.GetIndexer()
	deliberate := map[types.UID]bool{}
	var dmu sync.Mutex
	nodeAlive := func(name string) bool {
		if name == "" {
			return true
		}
		o, ok, _ := r.nodes.GetByKey(name)
		return ok && o.(*corev1.Node).DeletionTimestamp == nil
	}
	_, _ = pi.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, n interface{}) {
			p := n.(*corev1.Pod)
			if p.DeletionTimestamp != nil {
				dmu.Lock()
				if _, seen := deliberate[p.UID]; !seen {
					deliberate[p.UID] = nodeAlive(p.Spec.NodeName)
				}
				dmu.Unlock()
			}
		},
		DeleteFunc: func(o interface{}) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			p, ok := o.(*corev1.Pod)
			if !ok {
				return
			}
			dmu.Lock()
			d, seen := deliberate[p.UID]
			delete(deliberate, p.UID)
			dmu.Unlock()
			if !seen {
				d = nodeAlive(p.Spec.NodeName)
			}
			if !d && p.Status.Phase != corev1.PodSucceeded && !daemonPod(p) {
				r.mu.Lock()
				r.lost = append(r.lost, fmt.Sprintf("%s/%s on %s (phase %s): deleted after its node was gone", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase))
				r.mu.Unlock()
			}
		},
	})
	r.inf.Start(ctx.Done())
	r.inf.WaitForCacheSync(ctx.Done())
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n := r.sampleReady()
			r.mu.Lock()
			if !r.sampling && n >= 10 {
				r.sampling = true
				r.logf("workload-sample: 10 pods Ready, PDB sampling starts")
			}
			if r.sampling {
				r.samplePDB(n, time.Now())
			}
			r.mu.Unlock()
		}
	}()
}

// samplePDB records one sample of workload-sample's Ready pods (r.mu
// held). A spot reclaim is an involuntary disruption, which no PDB
// covers: the interruption drain deletes what is left of the node's pods
// at the reclaim minus their grace period (30 s), and their replacements
// are Ready again within a minute; samples in that window are counted
// apart (pdbReclaimMin) rather than as violations.
func (r *run) samplePDB(n int, now time.Time) {
	r.pdbSamples++
	why := ""
	for node, at := range r.reclaims {
		if !now.Before(at.Add(-35*time.Second)) && !now.After(at.Add(time.Minute)) {
			why += fmt.Sprintf(" (within the interruption deadline of %s, reclaim %s)", node, at.Format("15:04:05"))
		}
	}
	if why != "" {
		if r.pdbReclaimMin < 0 || n < r.pdbReclaimMin {
			r.pdbReclaimMin = n
		}
		return
	}
	if r.pdbMin < 0 || n < r.pdbMin {
		r.pdbMin = n
	}
	if n < 8 && len(r.pdbBad) < 50 {
		r.pdbBad = append(r.pdbBad, fmt.Sprintf("%s: %d Ready", now.Format("15:04:05.000"), n))
	}
}

func (r *run) sampleReady() int {
	n := 0
	for _, o := range r.pods.List() {
		p := o.(*corev1.Pod)
		if p.Namespace == "default" && p.Labels["app"] == "workload-sample" && p.DeletionTimestamp == nil &&
			p.Status.Phase == corev1.PodRunning && podReady(p) {
			n++
		}
	}
	return n
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// joineryNodes are the Ready Joinery nodes not being disrupted.
func (r *run) joineryNodes(spotOnly bool) []*corev1.Node {
	var out []*corev1.Node
	for _, o := range r.nodes.List() {
		n := o.(*corev1.Node)
		if n.Labels[apiv1.LabelNodePool] == "" || n.DeletionTimestamp != nil || n.Spec.Unschedulable {
			continue
		}
		if spotOnly && n.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeSpot {
			continue
		}
		bad := false
		for _, t := range n.Spec.Taints {
			if t.Key == apiv1.TaintKeyDisrupted {
				bad = true
			}
		}
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !bad && ready {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sagas counts the sagas so far from the workflows' visibility records.
func (r *run) sagas(ctx context.Context) (map[string]int, error) {
	out := map[string]int{"provisioning": 0, "drain": 0, "consolidation": 0, "interruption": 0}
	interrupted := map[string]bool{}
	err := r.listWorkflows(ctx, "", func(e wfInfo) {
		switch {
		case e.Type == workflows.NodeClaimWorkflow && strings.HasPrefix(e.Parent, "provision/"):
			out["provisioning"]++
		case e.Type == workflows.DrainAndReplaceWorkflow && strings.HasPrefix(e.ID, "disrupt/"+saga.ReasonManual+"/"):
			out["drain"]++
		case e.Type == workflows.DrainAndReplaceWorkflow && strings.HasPrefix(e.ID, "disrupt/interruption/"):
		case e.Type == workflows.DrainAndReplaceWorkflow, e.Type == workflows.ConsolidateWorkflow:
			out["consolidation"]++
		case e.Type == workflows.InterruptionWorkflow:
			parts := strings.Split(e.ID, "/")
			if len(parts) >= 2 {
				interrupted[parts[1]] = true
			}
		}
	})
	out["interruption"] = len(interrupted)
	return out, err
}

type wfInfo struct {
	ID, RunID, Type, Parent string
	Status                  enumspb.WorkflowExecutionStatus
}

func (r *run) listWorkflows(ctx context.Context, query string, f func(wfInfo)) error {
	var token []byte
	for {
		resp, err := r.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000, NextPageToken: token})
		if err != nil {
			return err
		}
		for _, e := range resp.Executions {
			in := wfInfo{ID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(), Type: e.GetType().GetName(), Status: e.GetStatus()}
			if p := e.GetParentExecution(); p != nil {
				in.Parent = p.GetWorkflowId()
			}
			f(in)
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			return nil
		}
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// chaos drives the world until enough sagas ran.
func (r *run) chaos(ctx context.Context) error {
	r.w.EC2.SetICEFraction(r.cfg.ICEFraction)
	r.w.EC2.SetThrottleFraction(r.cfg.ThrottleFraction)
	latCtx, stopLat := context.WithCancel(ctx)
	defer stopLat()
	r.w.EC2.JitterLatency(latCtx, r.cfg.LatencyMin, r.cfg.LatencyMax, 250*time.Millisecond, r.cfg.Seed)
	r.rep.Latency = fmt.Sprintf("%s-%s per request (redrawn every 250ms)", r.cfg.LatencyMin, r.cfg.LatencyMax)
	r.logf("faults on: ICE %.0f%% of pools, throttling %.0f%% of calls, latency %s", 100*r.cfg.ICEFraction, 100*r.cfg.ThrottleFraction, r.rep.Latency)
	restartAt := r.cfg.Sagas / 2
	step := 0
	lastCount := time.Time{}
	var counts map[string]int
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Since(lastCount) > 3*time.Second {
			c, err := r.sagas(ctx)
			if err == nil {
				counts = c
				lastCount = time.Now()
			}
		}
		n := total(counts)
		if n >= r.cfg.Sagas {
			r.logf("%d sagas (%s): chaos done", n, fmtCounts(counts))
			break
		}
		if r.rep.TemporalRestarts == 0 && n >= restartAt {
			r.logf("restarting the Temporal server from its SQLite file")
			if err := r.w.RestartTemporal(ctx); err != nil {
				return err
			}
			r.rep.TemporalRestarts++
			r.logf("Temporal server back")
		}
		step++
		r.ensureWorker()
		r.act(ctx, step, counts)
		// Random pause, during which the worker may be SIGKILLed.
		pause := time.Duration(3000+r.rng.IntN(9000)) * time.Millisecond
		if r.rng.Float64() < 0.4 {
			at := time.Duration(r.rng.Int64N(int64(pause)))
			sleep(ctx, at)
			r.killWorker()
			r.rep.WorkerKills++
			down := time.Duration(500+r.rng.IntN(3500)) * time.Millisecond
			r.logf("worker SIGKILLed (kill %d), restart in %s", r.rep.WorkerKills, down)
			sleep(ctx, down)
			if err := r.startWorker(); err != nil {
				return err
			}
			sleep(ctx, pause-at)
		} else {
			sleep(ctx, pause)
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// act takes one random action: scale inflate up or down, drain a node, or
// interrupt a spot node.
func (r *run) act(ctx context.Context, step int, counts map[string]int) {
	x := r.rng.Float64()
	switch {
	case x < 0.45:
		// Scale: up adds NodeClaims, down gives consolidation work.
		next := 5 + r.rng.IntN(46)
		if step%2 == 0 && r.inflate > 15 {
			next = 2 + r.rng.IntN(10)
		}
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, next)
		if _, err := r.kc.AppsV1().Deployments("default").Patch(ctx, "inflate", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			r.logf("scale inflate: %v", err)
			return
		}
		r.logf("step %d: inflate %d -> %d (sagas so far %s)", step, r.inflate, next, fmtCounts(counts))
		r.inflate = next
		r.rep.ScaleChanges++
	case x < 0.75:
		r.mu.Lock()
		inFlight := 0
		for _, d := range r.drains {
			desc, err := r.tc.DescribeWorkflowExecution(ctx, d.GetID(), d.GetRunID())
			if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				inFlight++
			}
		}
		r.mu.Unlock()
		nodes := r.joineryNodes(false)
		if inFlight >= 2 || len(nodes) == 0 {
			return
		}
		n := nodes[r.rng.IntN(len(nodes))]
		id := workflows.DisruptWorkflowID(saga.ReasonManual, n.Name)
		run, err := r.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING},
			workflows.DrainAndReplaceWorkflow, workflows.DisruptInput{NodeName: n.Name, Reason: saga.ReasonManual, Replace: true, SkipBudgets: true})
		if err != nil {
			r.logf("drain %s: %v", n.Name, err)
			return
		}
		r.mu.Lock()
		r.drains = append(r.drains, run)
		r.mu.Unlock()
		r.rep.DrainsStarted++
		r.logf("step %d: drain %s (%s %s)", step, n.Name, n.Labels[apiv1.LabelInstanceType], n.Labels[apiv1.LabelCapacityType])
	default:
		nodes := r.joineryNodes(true)
		if len(nodes) == 0 {
			return
		}
		n := nodes[r.rng.IntN(len(nodes))]
		res, err := r.w.SimulateInterruption(ctx, world.SimulateRequest{Node: n.Name, Kind: world.SimSpot, Notice: r.cfg.InterruptionNotice})
		if err != nil {
			r.logf("interrupt %s: %v", n.Name, err)
			return
		}
		r.rep.Interruptions++
		r.mu.Lock()
		if r.reclaims == nil {
			r.reclaims = map[string]time.Time{}
		}
		r.reclaims[n.Name] = res.ReclaimAt
		if res.ReclaimAt.After(r.reclaimBy) {
			r.reclaimBy = res.ReclaimAt
		}
		r.mu.Unlock()
		r.logf("step %d: spot interruption of %s (%s), reclaim at %s", step, n.Name, res.InstanceID, res.ReclaimAt.Format("15:04:05"))
	}
}

// settle turns the faults off and waits until no saga is in flight, every
// pod runs, and consolidation has had nothing to do for a while.
func (r *run) settle(ctx context.Context) {
	r.w.EC2.SetICEFraction(0)
	r.w.EC2.SetThrottleFraction(0)
	r.w.EC2.SetLatency(0)
	r.ensureWorker()
	r.logf("faults off; settling (up to %s)", r.cfg.SettleTimeout)
	deadline := time.Now().Add(r.cfg.SettleTimeout)
	r.mu.Lock()
	if d := r.reclaimBy.Add(r.cfg.SettleTimeout); d.After(deadline) {
		deadline = d // the last reclaim's state change must be seen too
	}
	r.mu.Unlock()
	quietSince := time.Time{}
	lastSagas := -1
	for time.Now().Before(deadline) && ctx.Err() == nil {
		r.ensureWorker()
		busy := 0
		_ = r.listWorkflows(ctx, `ExecutionStatus = "Running"`, func(e wfInfo) {
			switch e.Type {
			case workflows.ProvisionWorkflow, workflows.DrainAndReplaceWorkflow, workflows.ConsolidateWorkflow, workflows.InterruptionWorkflow:
				busy++
			}
		})
		pending := 0
		for _, o := range r.pods.List() {
			p := o.(*corev1.Pod)
			if p.Namespace == "default" && (p.Status.Phase != corev1.PodRunning || !podReady(p)) {
				pending++
			}
		}
		c, err := r.sagas(ctx)
		n := total(c)
		if err == nil && (busy > 0 || pending > 0 || n != lastSagas) {
			quietSince, lastSagas = time.Now(), n
		}
		r.mu.Lock()
		reclaimed := time.Now().After(r.reclaimBy.Add(15 * time.Second))
		r.mu.Unlock()
		if busy == 0 && pending == 0 && reclaimed && time.Since(quietSince) > r.cfg.Quiet {
			r.logf("settled: no saga in flight, every pod Running, no new disruption for %s", r.cfg.Quiet)
			return
		}
		sleep(ctx, 3*time.Second)
	}
	r.logf("settle timeout")
}

// daemonPod reports whether a DaemonSet runs the pod: it belongs to its
// node and goes with it (the pod garbage collector deletes it), which is
// no lost pod.
func daemonPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}
