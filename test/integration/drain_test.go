//go:build integration

package integration

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The example PDB (workload-sample, minAvailable 8 of 10) holds during a
// drain-and-replace of the node with most of its pods, while the worker
// process is SIGKILLed and restarted once while the saga waits for the
// replacement (step 3) and once while it drains (step 4).
func TestDrainAndReplaceSurvivesWorkerKillsAndKeepsThePDB(t *testing.T) {
	parallel(t)
	t.Run("example", func(t *testing.T) {
		long(t, `the "dense" case (kills in both steps, the PDB held, a replacement)`)
		drainWithKills(t, "../../examples/workloads.yaml", 1)
	})
	// The example's pods land one per node; this variant packs them so the
	// PDB refuses evictions (429) and the drain must wait for replacements.
	t.Run("dense", func(t *testing.T) { drainWithKills(t, "testdata/pdb-dense.yaml", 3) })
}

func drainWithKills(t *testing.T, workloads string, wantOnNode int) {
	e := startEnvWith(t, false)
	w := e.startWorker(t)
	e.apply(t, kept(readManifests(t, "../../examples/nodepools.yaml", workloads), poolsClassAndSample))
	ready := func() (int, map[string]int) { return e.readyPods("app=workload-sample") }
	waitFor(t, 3*time.Minute, "10 workload-sample pods Ready", func() bool { n, _ := ready(); return n == 10 })
	_, byNode := ready()
	target, most := busiestNode(byNode)
	if most < wantOnNode {
		t.Fatalf("no node holds %d workload-sample pods: %v", wantOnNode, byNode)
	}
	t.Logf("draining %s, which holds %d of the 10 workload-sample pods (%v)", target, most, byNode)
	// The other nodes are cordoned, so the drain's plan needs a
	// replacement whatever room the provisioning plan left on them.
	e.cordonAllBut(t, target)
	e.waitPDBAllows(t, "workload-sample", 2)

	// Sample Ready pods continuously.
	sampler := sampleMinReady(ready, 10)

	id := workflows.DisruptWorkflowID(saga.ReasonManual, target)
	run, err := e.tc.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
		workflows.DrainAndReplaceWorkflow, workflows.DisruptInput{NodeName: target, Reason: saga.ReasonManual, Replace: true, SkipBudgets: true})
	if err != nil {
		t.Fatal(err)
	}
	phase := func() string {
		p, _ := queryStatus[string](e, id)
		return p
	}
	killedIn := map[string]bool{}
	for _, step := range []string{workflows.PhaseReplacing, workflows.PhaseDraining} {
		waitFor(t, 2*time.Minute, "phase "+step, func() bool {
			p := phase()
			return p == step || p == workflows.PhaseDone
		})
		if phase() == step {
			w.kill()
			killedIn[step] = true
			t.Logf("worker SIGKILLed during %s", step)
			time.Sleep(2 * time.Second)
			w = e.startWorker(t)
		}
	}
	var res workflows.DisruptResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("drain: %v", err)
	}
	sampler.Stop()
	minReady := sampler.Min()
	t.Logf("result %+v; killed in %v; min Ready %d", res, killedIn, minReady)
	if workloads == "testdata/pdb-dense.yaml" {
		done, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: `WorkflowType = "NodeClaim" AND ExecutionStatus = "Completed"`})
		if err == nil && len(done.Executions) > 0 {
			// A whole node life: launch, Ready, terminate on the drain's signal.
			recordHistories(t, e, id, done.Executions[0].Execution.WorkflowId)
		}
	}
	if !killedIn[workflows.PhaseReplacing] || !killedIn[workflows.PhaseDraining] {
		t.Errorf("the worker was not killed in both steps: %v", killedIn)
	}
	// Evicted counts only passes the history recorded: a pass cut short by
	// the kill is retried and finds its pods already gone.
	if res.Outcome != workflows.PhaseDone || len(res.Replacements) == 0 {
		t.Errorf("result = %+v", res)
	}
	if minReady < 8 {
		t.Errorf("PDB violated: only %d workload-sample pods Ready at one moment (minAvailable 8)", minReady)
	}
	if _, err := e.kc.CoreV1().Nodes().Get(e.ctx, target, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("drained node still exists: %v", err)
	}
	waitFor(t, time.Minute, "10 workload-sample pods Ready after the drain", func() bool { n, _ := ready(); return n == 10 })

	// Nothing leaked: every live instance has a Node and a NodeClaim, and no node stays tainted.
	nodes, _ := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	byProvider := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		byProvider[n.Spec.ProviderID] = n
		for _, tt := range n.Spec.Taints {
			if tt.Key == apiv1.TaintKeyDisrupted {
				t.Errorf("node %s still tainted %s", n.Name, tt.Key)
			}
		}
	}
	for _, in := range e.w.EC2.Instances() {
		if in.State != "running" {
			continue
		}
		n, ok := byProvider["aws:///"+in.Zone+"/"+in.ID]
		if !ok {
			t.Errorf("instance %s is running without a Node (leaked)", in.ID)
			continue
		}
		if strings.HasSuffix(n.Name, target) {
			t.Errorf("the drained node's instance %s is still running", in.ID)
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyPods counts the Running, Ready, not-deleting pods of the default
// namespace the label selector matches, in all and per node (-1 when the
// list fails).
func (e *env) readyPods(selector string) (int, map[string]int) {
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return -1, nil
	}
	n, byNode := 0, map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			n++
			byNode[p.Spec.NodeName]++
		}
	}
	return n, byNode
}

// waitPDBAllows waits until the disruption controller reports that the
// default namespace's PDB name allows n disruptions.
func (e *env) waitPDBAllows(t *testing.T, name string, n int32) {
	t.Helper()
	waitFor(t, time.Minute, "PDB status", func() bool {
		pdb, err := e.kc.PolicyV1().PodDisruptionBudgets("default").Get(e.ctx, name, metav1.GetOptions{})
		return err == nil && pdb.Status.DisruptionsAllowed == n
	})
}

// busiestNode is the node with the most pods in byNode (a readyPods
// count) and how many it has.
func busiestNode(byNode map[string]int) (node string, most int) {
	for n, c := range byNode {
		if c > most {
			node, most = n, c
		}
	}
	return node, most
}

// readySampler keeps the fewest Ready pods ready() counted, sampled every
// 50 ms from sampleMinReady until Stop: a PDB must hold at every sample.
type readySampler struct {
	mu       sync.Mutex
	min      int
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// sampleMinReady starts sampling ready(), with start as the minimum so far;
// failed counts (-1) are skipped.
func sampleMinReady(ready func() (int, map[string]int), start int) *readySampler {
	s := &readySampler{min: start, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if n, _ := ready(); n >= 0 {
				s.mu.Lock()
				s.min = min(s.min, n)
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// Min is the fewest Ready pods sampled so far.
func (s *readySampler) Min() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.min
}

// queryStatus is a workflow's status query answer; ok is false while the
// workflow does not answer (not started yet, or its worker restarting).
func queryStatus[T any](e *env, id string) (st T, ok bool) {
	v, err := e.tc.QueryWorkflow(e.ctx, id, "", workflows.QueryStatus)
	return st, err == nil && v.Get(&st) == nil
}

// Stop ends the sampling and waits for it; calling it again does nothing.
func (s *readySampler) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cordonAllBut marks every node but keep unschedulable.
func (e *env) cordonAllBut(t *testing.T, keep string) {
	t.Helper()
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Name == keep {
			continue
		}
		if _, err := e.kc.CoreV1().Nodes().Patch(e.ctx, n.Name, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
