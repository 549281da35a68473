package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/solver"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// shapes are the mixed pod shapes: cpu, memory per pod.
var shapes = []struct{ cpu, mem string }{{"250m", "256Mi"}, {"500m", "512Mi"}, {"1", "1Gi"}, {"1", "4Gi"}, {"2", "2Gi"}}

// workloads writes one Deployment per shape (pods split evenly) and a
// DaemonSet (100m/128Mi), plus the example NodePools with general-purpose
// limits raised so they do not cap the run.
func workloads(dir string, pods int) (string, error) {
	src, err := os.ReadFile(repoFile("examples/nodepools.yaml"))
	if err != nil {
		return "", err
	}
	pools := strings.Replace(string(src), "    cpu: 1000\n    memory: 2000Gi", "    cpu: 100000\n    memory: 200000Gi", 1)
	var b strings.Builder
	b.WriteString(pools)
	for i, s := range shapes {
		n := pods / len(shapes)
		if i < pods%len(shapes) {
			n++
		}
		fmt.Fprintf(&b, `
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: bench-%d}
spec:
  replicas: %d
  selector: {matchLabels: {app: bench-%d}}
  template:
    metadata: {labels: {app: bench-%d}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: app
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources: {requests: {cpu: "%s", memory: %s}}
`, i, n, i, i, s.cpu, s.mem)
	}
	b.WriteString(`
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
        - name: agent
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources: {requests: {cpu: 100m, memory: 128Mi}}
`)
	path := filepath.Join(dir, "bench.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// benchWorkloads writes the workloads of a run of pods pods into w's state
// directory and returns the file, its objects and a client of w's API server.
func benchWorkloads(w *world.World, pods int) (string, []*unstructured.Unstructured, kubernetes.Interface, error) {
	path, err := workloads(w.StateDir, pods)
	if err != nil {
		return "", nil, nil, err
	}
	objs, err := kube.ReadManifests(path)
	if err != nil {
		return "", nil, nil, err
	}
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	return path, objs, kc, err
}

func measure(ctx context.Context, w *world.World, pods, workerPid int) (*Report, error) {
	r := &Report{Pods: pods}
	path, objs, kc, err := benchWorkloads(w, pods)
	if err != nil {
		return nil, err
	}
	if docs, errs := planner.ReadFiles(path); len(errs) == 0 {
		if built, errs := planner.Build(docs, planner.Options{}); len(errs) == 0 {
			r.LowerBound = solver.LowerBound(built.Input)
			single := solver.Solve(built.Input)
			r.SingleBatchUSD, r.SingleBatchNodes = single.Price(), len(single.NewNodeClaims)
		}
	}
	pw, err := watchPods(ctx, kc)
	if err != nil {
		return nil, err
	}
	w.EC2.SetRecording(true)
	cpuAtApply := cpuTimes(w.StateDir, workerPid)
	applied := time.Now()
	if err := kube.Apply(ctx, w.Kube.RESTConfig(), objs); err != nil {
		return nil, err
	}
	peak := 0.0
	var lastPod time.Time
	err = pollEvery(ctx, 250*time.Millisecond, func() bool {
		peak = max(peak, rssMiB(os.Getpid()))
		r.WorkerPeakRSSMiB = max(r.WorkerPeakRSSMiB, rssMiB(workerPid))
		c := pw.counts()
		r.AllPodsRunning, lastPod = time.Since(applied), c.lastCreated
		return c.running >= pods
	})
	if err != nil {
		return nil, fmt.Errorf("only %d/%d pods Running after %s: %w", pw.counts().running, pods, time.Since(applied).Round(time.Second), err)
	}
	r.PeakRSSMiB = peak
	r.CPUSeconds = map[string]float64{}
	for name, sec := range cpuTimes(w.StateDir, workerPid) {
		r.CPUSeconds[name] = sec - cpuAtApply[name]
	}
	// Creation timestamps have a 1 s resolution: count from the end of
	// that second.
	r.LastPodCreated = max(0, lastPod.Add(time.Second).Sub(applied))
	r.KubeAPIServerMiB = rssOf("kube-apiserver", w.StateDir)
	for _, in := range w.EC2.Instances() {
		r.AllLaunched = max(r.AllLaunched, in.LaunchTime.Sub(applied))
	}
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool})
	if err != nil {
		return nil, err
	}
	r.Nodes = len(nodes.Items)
	r.LaunchedAfterLastPod = r.AllLaunched - r.LastPodCreated
	r.LastPodMarked = pw.lastMarked().Sub(applied)
	r.LaunchedAfterLastMarked = r.AllLaunched - r.LastPodMarked
	r.RunningAfterLastPod = r.AllPodsRunning - r.LastPodCreated
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				r.AllNodesReady = max(r.AllNodesReady, c.LastTransitionTime.Sub(applied))
			}
		}
	}
	if s, err := world.Summarize(ctx, kc, pods); err == nil {
		r.USDPerHour = s.USDPerHour
	}
	r.EC2Calls = w.EC2.Calls()
	r.Fleets = fleetFigures(w.EC2.Requests(), applied)
	tc, err := client.Dial(client.Options{HostPort: w.Temporal.Address})
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	first := time.Time{}
	r.ProvisionRuns, first = countWorkflows(ctx, tc, "Provision")
	r.NodeClaimRuns, _ = countWorkflows(ctx, tc, "NodeClaim")
	for _, st := range []string{"Failed", "Terminated", "TimedOut"} {
		n, _ := countQuery(ctx, tc, fmt.Sprintf("ExecutionStatus = %q", st))
		r.FailedWorkflows += n
	}
	r.LimitWarnings = limitWarnings(filepath.Join(w.StateDir, "joinery.log"), filepath.Join(w.StateDir, "world.log"), filepath.Join(w.StateDir, "temporal.log"))
	r.PlannedUSD = plannedUSD(filepath.Join(w.StateDir, "joinery.log"))
	if !first.IsZero() {
		r.FirstProvision = first.Sub(applied)
	}
	r.Provisions = provisionSpans(ctx, tc, applied)
	return r, nil
}

// ProvisionSpan is one Provision workflow on the run's clock: when it
// started and closed (from the apply) and how many NodeClaim lifecycles
// it started.
type ProvisionSpan struct {
	ID         string        `json:"id"`
	Start      time.Duration `json:"start"`
	Close      time.Duration `json:"close"`
	NodeClaims int           `json:"nodeClaims"`
}

func provisionSpans(ctx context.Context, tc client.Client, applied time.Time) []ProvisionSpan {
	children := map[string]int{}
	for _, e := range listExecutions(ctx, tc, `WorkflowType = "NodeClaim"`) {
		if e.ParentExecution != nil {
			children[e.ParentExecution.WorkflowId]++
		}
	}
	var spans []ProvisionSpan
	for _, e := range listExecutions(ctx, tc, `WorkflowType = "Provision"`) {
		sp := ProvisionSpan{ID: e.Execution.WorkflowId, Start: e.StartTime.AsTime().Sub(applied), NodeClaims: children[e.Execution.WorkflowId]}
		if e.CloseTime != nil {
			sp.Close = e.CloseTime.AsTime().Sub(applied)
		}
		spans = append(spans, sp)
	}
	slices.SortFunc(spans, func(a, b ProvisionSpan) int { return cmp.Compare(a.Start, b.Start) })
	return spans
}

// countWorkflows counts workflows of a type and returns the earliest start.
func countWorkflows(ctx context.Context, tc client.Client, typ string) (int, time.Time) {
	return countQuery(ctx, tc, fmt.Sprintf("WorkflowType = %q", typ))
}

// limitPatterns are what the Temporal server and SDK log when a payload,
// a history or a gRPC message outgrows its limit.
var limitPatterns = []string{"BlobSizeLimit", "blob size", "exceeds size limit", "history size exceeds", "HistorySizeLimit",
	"history count exceeds", "message larger than max", "ResourceExhausted"}

// limitWarnings counts log lines that report a Temporal limit hit.
func limitWarnings(paths ...string) int {
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, pat := range limitPatterns {
				if strings.Contains(line, pat) {
					n++
					break
				}
			}
		}
	}
	return n
}

// plannedUSD sums the USD/hour of the worker's provisioning plans (its
// JSON log lines "provisioning plan").
func plannedUSD(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `"provisioning plan"`) {
			continue
		}
		var plan struct {
			Msg        string  `json:"msg"`
			USDPerHour float64 `json:"usdPerHour"`
		}
		if json.Unmarshal([]byte(line), &plan) == nil && plan.Msg == "provisioning plan" {
			sum += plan.USDPerHour
		}
	}
	return sum
}

// countQuery counts the workflows a visibility query matches and returns
// the earliest start.
func countQuery(ctx context.Context, tc client.Client, query string) (int, time.Time) {
	var first time.Time
	all := listExecutions(ctx, tc, query)
	for _, e := range all {
		if st := e.StartTime.AsTime(); first.IsZero() || st.Before(first) {
			first = st
		}
	}
	return len(all), first
}

// listExecutions is every workflow a visibility query matches (as many
// as could be listed).
func listExecutions(ctx context.Context, tc client.Client, query string) []*workflowpb.WorkflowExecutionInfo {
	var all []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return all
		}
		all = append(all, resp.Executions...)
		if token = resp.NextPageToken; len(token) == 0 {
			return all
		}
	}
}

// rssMiB reads VmHWM (peak resident set) of a process from /proc, MiB.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// rssOf is the peak RSS of the process named name whose command line
// mentions dir (this world's, not another one's).
func rssOf(name, dir string) float64 {
	if pid := pidOf(name, dir); pid > 0 {
		return rssMiB(pid)
	}
	return 0
}

// pidOf finds the process named name whose command line mentions dir (0:
// none).
func pidOf(name, dir string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		// comm holds at most 15 bytes (TASK_COMM_LEN): kube-controller-manager is "kube-controller".
		if strings.TrimSpace(string(comm)) == name[:min(len(name), 15)] && strings.Contains(string(cmdline), dir) {
			return pid
		}
	}
	return 0
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// cpuSeconds is the user+system CPU time a process has used, seconds, from
// fields 14 and 15 of /proc/<pid>/stat (proc(5)).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statCPUSeconds(string(b))
}

// statCPUSeconds parses utime+stime from a /proc/<pid>/stat line.
func statCPUSeconds(b string) float64 {
	// The command name (field 2) may hold spaces: count from its ")".
	f := strings.Fields(b[strings.LastIndexByte(b, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / clockTicks
}

// cpuUse names the processes of a run whose CPU time the bench reports.
var cpuUse = []string{"worker", "bench (Temporal server, EC2/SQS)", "kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager", "kwok"}

// cpuTimes reads the CPU seconds of each process of cpuUse.
func cpuTimes(dir string, workerPid int) map[string]float64 {
	out := map[string]float64{cpuUse[0]: cpuSeconds(workerPid), cpuUse[1]: cpuSeconds(os.Getpid())}
	for _, name := range cpuUse[2:] {
		if pid := pidOf(name, dir); pid > 0 {
			out[name] = cpuSeconds(pid)
		}
	}
	return out
}

// FleetFigures describe the run's CreateFleet calls: how many, how many
// EC2 refused as throttled, how many distinct launch requests (launch
// templates, overrides and capacity type: the calls one CreateFleet with
// a larger target capacity could have served), and the first and last
// call that launched, from the apply.
type FleetFigures struct {
	Calls     int           `json:"calls"`
	Throttled int           `json:"throttled"`
	Distinct  int           `json:"distinctRequests"`
	First     time.Duration `json:"first"`
	Last      time.Duration `json:"last"`
}

func fleetFigures(reqs []ec2.Request, applied time.Time) FleetFigures {
	var f FleetFigures
	distinct := map[string]bool{}
	for _, r := range reqs {
		if r.Action != "CreateFleet" {
			continue
		}
		f.Calls++
		if r.Throttled {
			f.Throttled++
			continue
		}
		var key strings.Builder
		for _, k := range slices.Sorted(maps.Keys(r.Params)) {
			if strings.HasPrefix(k, "LaunchTemplateConfigs.") || k == "TargetCapacitySpecification.DefaultTargetCapacityType" {
				fmt.Fprintf(&key, "%s=%s;", k, r.Params.Get(k))
			}
		}
		distinct[key.String()] = true
		at := r.Time.Sub(applied)
		if f.First == 0 || at < f.First {
			f.First = at
		}
		f.Last = max(f.Last, at)
	}
	f.Distinct = len(distinct)
	return f
}
