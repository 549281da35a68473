//go:build integration

// Package integration runs Joinery end to end on the local world: a real
// control plane, the embedded Temporal server and the EC2 endpoint over HTTP.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/sim/kube"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/solver/resources"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// env is one local world with the controller running in-process.
type env struct {
	w    *world.World
	kc   kubernetes.Interface
	tc   client.Client
	ctx  context.Context
	dir  string
	slot int // its ports' slot (slotOf)
}

// systemNodes is how many system nodes the tests' world has before any
// workload (world.Options.SystemNodes), as a real cluster does.
const systemNodes = world.DefaultSystemNodes

// launchedNodes lists the nodes Joinery launched, not the world's system
// nodes (world.Options.SystemNodes).
var launchedNodes = metav1.ListOptions{LabelSelector: apiv1.LabelNodePool}

func startEnv(t *testing.T) *env {
	t.Helper()
	return startEnvWith(t, true)
}

// startEnvWith starts the local world and, when inProcess, the controller
// in this process (otherwise the test runs it with startWorker).
func startEnvWith(t *testing.T, inProcess bool, tune ...func(*controller.Config)) *env {
	t.Helper()
	return startEnvWorld(t, nil, inProcess, tune...)
}

// startEnvWorld is startEnvWith with the world's options adjusted by
// tuneWorld (nil: none).
func startEnvWorld(t *testing.T, tuneWorld func(*world.Options), inProcess bool, tune ...func(*controller.Config)) *env {
	t.Helper()
	s := slotOf(t) // may wait for a slot: the test's clock starts after
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	log, err := logging.NewFile(filepath.Join(dir, "joinery.log"), "info")
	if err != nil {
		t.Fatal(err)
	}
	wo := world.Options{
		StateDir: dir, BootDelay: time.Second, SystemNodes: systemNodes, TemporalPort: port(s, 17233), UIPort: port(s, 18233), Progress: os.Stderr, Log: log, ClusterName: "joinery-it",
		KubePorts: kube.Ports{Etcd: port(s, 26790), EtcdPeer: port(s, 26791), APIServer: port(s, 26443), Scheduler: port(s, 26459),
			ControllerManager: port(s, 26457), Kwok: port(s, 26480)},
	}
	if tuneWorld != nil {
		tuneWorld(&wo)
	}
	w, err := world.Start(ctx, wo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "joinery.log"))
			lines := strings.Split(string(b), "\n")
			t.Logf("controller warnings and scheduler hints:\n%s", strings.Join(notable(lines, 150), "\n"))
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			t.Logf("controller log tail:\n%s", strings.Join(lines, "\n"))
		}
	})
	e := &env{w: w, ctx: ctx, dir: dir, slot: s}
	if inProcess {
		e.runController(t, log, tune...)
	}
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := client.Dial(client.Options{HostPort: w.Temporal.Address})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	e.kc, e.tc = kc, tc
	return e
}

func (e *env) runController(t *testing.T, log *zap.Logger, tune ...func(*controller.Config)) {
	w, ctx := e.w, e.ctx
	cctx, stop := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan error, 1)
	cfg := controller.Config{
		Connection: controller.Connection{RESTConfig: w.Kube.RESTConfig(), TemporalAddress: w.Temporal.Address, EC2Endpoint: w.EC2Endpoint},
		Cluster:    controller.Cluster{ClusterName: "joinery-it"},
		// The whole search: the same plan for the same pods however busy
		// the machine (startWorker's worker processes too; the default
		// time budget runs in the bench and chaos worlds and the solver's
		// unit tests).
		Tuning: controller.Tuning{SolverBudget: -1},
		Log:    log, Ready: ready,
	}
	w.SetEndpoints(&cfg)
	for _, f := range tune {
		f(&cfg)
	}
	cfg.MetricsAddr = e.addr(cfg.MetricsAddr) // the tests name slot 0's addresses
	go func() { done <- controller.Run(cctx, cfg) }()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("controller: %v", err)
	}
}

func TestSliceProvisionsTheExamples(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.MetricsAddr = metricsAddr })
	checkSlice(t, e)
}

// checkSlice applies the examples and checks where every pod landed, the
// NodePool limits, every node's NodeClaim workflow (found by search
// attribute, queried), the metrics and the launch path.
func checkSlice(t *testing.T, e *env) {
	t.Helper()
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml")
	e.apply(t, objs)
	want, nss := world.ExpectedPods(objs)
	if want != 70 {
		t.Fatalf("expected pods = %d, want 70 (50 inflate + 3 redis + 10 sample + trainer + 6 arm-batch)", want)
	}
	sctx, cancel := context.WithTimeout(e.ctx, 4*time.Minute)
	defer cancel()
	settled, err := world.WaitSettled(sctx, e.kc, want, nss)
	if err != nil {
		t.Fatal(err)
	}
	settled.Print(os.Stderr)

	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: "!" + world.SystemNodeGroupLabel})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		if n.Labels[apiv1.LabelNodePool] == "" {
			t.Errorf("node %s was not launched by Joinery", n.Name)
		}
		byName[n.Name] = n
	}
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	redis, arm := 0, 0
	for _, p := range pods.Items {
		// kwok completes Job pods as soon as they run.
		jobDone := p.Status.Phase == corev1.PodSucceeded && strings.HasPrefix(p.Name, "arm-batch")
		if p.Status.Phase != corev1.PodRunning && !jobDone {
			t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
			continue
		}
		n := byName[p.Spec.NodeName]
		switch {
		case p.Name == "trainer":
			if n.Labels[apiv1.LabelInstanceGPUCount] != "4" || n.Labels[apiv1.LabelInstanceGPUManu] != "nvidia" {
				t.Errorf("trainer on %s (%s) with gpu labels %q/%q, want 4 NVIDIA GPUs", n.Name,
					n.Labels[apiv1.LabelInstanceType], n.Labels[apiv1.LabelInstanceGPUCount], n.Labels[apiv1.LabelInstanceGPUManu])
			}
		case p.Labels["app"] == "redis":
			redis++
			mem := n.Status.Allocatable[corev1.ResourceMemory]
			if mem.Cmp(resource.MustParse("16Gi")) < 0 {
				t.Errorf("redis %s on %s with %s allocatable memory, want >= 16Gi", p.Name, n.Name, mem.String())
			}
		case strings.HasPrefix(p.Name, "arm-batch"):
			arm++
			if n.Labels[apiv1.LabelArch] != "arm64" {
				t.Errorf("arm-batch pod %s on %s arch %s", p.Name, n.Name, n.Labels[apiv1.LabelArch])
			}
		}
	}
	if redis != 3 || arm != 6 {
		t.Errorf("redis pods = %d, arm-batch pods = %d", redis, arm)
	}

	// No NodePool limit exceeded: summed node capacity per pool.
	limits := map[string]corev1.ResourceList{
		"general-purpose":  {corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("2000Gi")},
		"memory-optimized": {corev1.ResourceCPU: resource.MustParse("200")},
		"graviton-spot":    {corev1.ResourceCPU: resource.MustParse("300")},
		"gpu":              {corev1.ResourceCPU: resource.MustParse("200")},
	}
	usage := map[string]resources.List{}
	for _, n := range byName {
		c, _ := resources.FromResourceList(n.Status.Capacity)
		usage[n.Labels[apiv1.LabelNodePool]] = usage[n.Labels[apiv1.LabelNodePool]].Add(c)
	}
	for pool, lim := range limits {
		l, _ := resources.FromResourceList(lim)
		for i := range l {
			if l[i] > 0 && usage[pool][i] > l[i] {
				t.Errorf("NodePool %s uses %s, limit %s", pool, usage[pool].String(), l.String())
			}
		}
	}

	// Every node has a NodeClaim object and a NodeClaim workflow past its
	// launch phase, findable by search attribute.
	for name, n := range byName {
		pool := n.Labels[apiv1.LabelNodePool]
		q := fmt.Sprintf("NodeName = %q AND NodePool = %q", name, pool)
		var found *workflowservice.ListWorkflowExecutionsResponse
		deadline := time.Now().Add(30 * time.Second)
		for {
			found, err = e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
			if err == nil && len(found.Executions) == 1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil || len(found.Executions) != 1 {
			t.Errorf("workflows for %q: %v (err %v)", q, found, err)
			continue
		}
		ex := found.Executions[0]
		if !strings.HasPrefix(ex.Execution.WorkflowId, "nodeclaim/") {
			t.Errorf("node %s: workflow %s", name, ex.Execution.WorkflowId)
		}
		v, err := e.tc.QueryWorkflow(e.ctx, ex.Execution.WorkflowId, "", workflows.QueryStatus)
		if err != nil {
			t.Errorf("query %s: %v", ex.Execution.WorkflowId, err)
			continue
		}
		var st workflows.NodeClaimStatus
		if err := v.Get(&st); err != nil || st.Phase != workflows.PhaseReady || st.NodeName != name {
			t.Errorf("%s status = %+v (%v)", ex.Execution.WorkflowId, st, err)
		}
	}
	gp, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: `NodePool = "general-purpose"`})
	if err != nil || len(gp.Executions) == 0 {
		t.Errorf("filter NodePool = general-purpose: %v %v", gp, err)
	}
	if prov, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: `WorkflowType = "Provision"`}); err == nil && len(prov.Executions) > 0 {
		recordHistories(t, e, prov.Executions[len(prov.Executions)-1].Execution.WorkflowId)
	}

	checkMetrics(t, e, len(byName))
	checkPrinterColumns(t, e, len(byName))
	checkLaunchedFromNodeClass(t, e, byName)

	// Price sanity: spot is preferred for general-purpose, and the plan is
	// not one node per pod.
	if len(byName) >= 30 {
		t.Errorf("%d nodes for 70 pods: packing is broken", len(byName))
	}
}

// checkLaunchedFromNodeClass: the example EC2NodeClass is Ready with its
// resolved status, and every node booted from a generated launch template
// with the image its instance type needs (arm64 types the arm64 image, GPU
// types the nvidia variant, whose driver puts the GPUs in allocatable).
func checkLaunchedFromNodeClass(t *testing.T, e *env, byName map[string]corev1.Node) {
	t.Helper()
	cls := getNodeClass(t, e, dynamicClient(t, e), "default")
	if !apiv1.IsConditionTrue(cls.Status.Conditions, apiv1.ConditionReady) || len(cls.Status.Subnets) != 3 ||
		len(cls.Status.SecurityGroups) == 0 || len(cls.Status.AMIs) < 4 || cls.Status.InstanceProfile == "" {
		t.Errorf("EC2NodeClass default status = %+v", cls.Status)
	}
	for _, i := range e.w.EC2.Instances() {
		if i.State != "running" {
			continue
		}
		img, _ := e.w.EC2.Image(i.ImageID)
		n, ok := byName[i.PrivateDNSName]
		if !ok {
			// Launched after the slice was listed: checked once its Node
			// registers, like the others.
			n = registeredNode(t, e, i.PrivateDNSName)
		}
		wantArch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[n.Labels[apiv1.LabelArch]]
		wantVariant := "standard"
		if n.Labels[apiv1.LabelInstanceGPUCount] != "" {
			wantVariant = "nvidia"
			if gpus := n.Status.Allocatable["nvidia.com/gpu"]; gpus.Value() == 0 {
				t.Errorf("GPU node %s has no nvidia.com/gpu in allocatable", n.Name)
			}
		}
		if !strings.HasPrefix(i.LaunchTemplateName, "joinery/joinery-it/") || img.Architecture != wantArch || img.Variant != wantVariant {
			t.Errorf("instance %s (%s) from template %q, image %s %s/%s; want a generated template and %s/%s",
				i.ID, i.InstanceType, i.LaunchTemplateName, i.ImageID, img.Architecture, img.Variant, wantArch, wantVariant)
		}
	}
}

// registeredNode waits (up to a minute) for the Node of a running
// instance and returns it.
func registeredNode(t *testing.T, e *env, name string) corev1.Node {
	t.Helper()
	var n *corev1.Node
	waitFor(t, time.Minute, "node "+name+" registered", func() bool {
		var err error
		n, err = e.kc.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
		return err == nil
	})
	return *n
}

// startEnvOpts is startEnvWorld with its arguments in another order.
func startEnvOpts(t *testing.T, inProcess bool, wopt func(*world.Options), tune ...func(*controller.Config)) *env {
	return startEnvWorld(t, wopt, inProcess, tune...)
}

// notable are the worker's warnings and errors (not the Temporal SDK's)
// and its scheduler hints, the first max of them: what a failed test's
// log tail, cut at the end, may not show.
func notable(lines []string, max int) []string {
	var out []string
	for _, l := range lines {
		sdk := strings.Contains(l, `"component":"temporal-sdk"`)
		if !sdk && (strings.Contains(l, `"level":"warn"`) || strings.Contains(l, `"level":"error"`)) || strings.Contains(l, `"logger":"scheduler-hints"`) {
			out = append(out, l)
		}
		if len(out) == max {
			break
		}
	}
	return out
}
