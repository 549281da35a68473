//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/temporal"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSliceOnPostgres is the vertical slice (TestSliceProvisionsTheExamples)
// with the embedded Temporal server on PostgreSQL, as Temporal runs in
// production: JOINERY_TEST_POSTGRES is a DSN whose user may create
// databases (.ci/run starts one with hack/postgres.sh). Then Temporal
// restarts: every workflow is still there, every node's NodeClaim workflow
// still answers, and a pod that needs a new node gets one through the
// restarted server.
func TestSliceOnPostgres(t *testing.T) {
	parallel(t)
	dsn := os.Getenv("JOINERY_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("JOINERY_TEST_POSTGRES is unset: set it to a PostgreSQL DSN whose user may create databases (hack/postgres.sh start DIR prints one) to run the slice on PostgreSQL")
	}
	wipe, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := temporal.WipePostgres(wipe, dsn); err != nil {
		t.Fatal(err)
	}
	e := startEnvWorld(t, func(o *world.Options) { o.TemporalPostgres = dsn }, true,
		func(c *controller.Config) { c.MetricsAddr = metricsAddr })
	checkSlice(t, e)
	if t.Failed() {
		return
	}

	before := listAllWorkflows(t, e)
	nodeClaims := 0
	for id := range before {
		if strings.HasPrefix(id, "nodeclaim/") {
			nodeClaims++
		}
	}
	if nodeClaims == 0 {
		t.Fatalf("no nodeclaim workflows listed before the restart: %v", before)
	}
	if err := e.w.RestartTemporal(e.ctx); err != nil {
		t.Fatal(err)
	}
	after := listAllWorkflows(t, e)
	for id, st := range before {
		got, ok := after[id]
		switch {
		case !ok:
			t.Errorf("workflow %s (%s) is gone after the restart", id, st)
		case st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && got != st:
			t.Errorf("closed workflow %s was %s, now %s", id, st, got)
		}
	}

	// Every node's workflow answers again once the worker has reconnected.
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		id := nodeClaimWorkflowOf(t, e, n.Name)
		st, err := queryStatusRetrying(e, id)
		if err != nil || st.Phase != workflows.PhaseReady || st.NodeName != n.Name {
			t.Errorf("after the restart %s status = %+v (%v), want %s on %s", id, st, err, workflows.PhaseReady, n.Name)
		}
	}

	// The restarted server carries new work: a pod bigger than any running
	// node's allocatable CPU (whatever sizes the anytime solver chose) gets a
	// new node, whose NodeClaim workflow the restarted server runs.
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml")
	want, nss := world.ExpectedPods(objs)
	cpu := biggerThanAnyNode(nodes.Items)
	one := int32(1)
	big := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "after-restart"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "after-restart"}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{apiv1.LabelNodePool: "general-purpose"},
					Containers: []corev1.Container{{
						Name: "pause", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.2",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}},
					}},
				},
			},
		},
	}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	settled, err := world.WaitSettled(sctx, e.kc, want+1, nss)
	if err != nil {
		t.Fatalf("after the restart, %d pods: %v", want+1, err)
	}
	settled.Print(os.Stderr)
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=after-restart"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("after-restart pods: %v %v", pods, err)
	}
	node := pods.Items[0].Spec.NodeName
	for _, n := range nodes.Items {
		if n.Name == node {
			t.Fatalf("the %s-CPU pod went to %s, a node from before the restart", cpu.String(), node)
		}
	}
	id := nodeClaimWorkflowOf(t, e, node)
	if _, existed := before[id]; existed {
		t.Errorf("new node %s has workflow %s from before the restart", node, id)
	}
	if st, err := queryStatusRetrying(e, id); err != nil || st.Phase != workflows.PhaseReady {
		t.Errorf("%s status = %+v (%v), want %s", id, st, err, workflows.PhaseReady)
	}
}

// biggerThanAnyNode is a whole CPU count no node's allocatable holds, so
// a pod requesting it needs a new node even if consolidation empties one.
func biggerThanAnyNode(nodes []corev1.Node) resource.Quantity {
	most := int64(0)
	for _, n := range nodes {
		if c := n.Status.Allocatable.Cpu().MilliValue(); c > most {
			most = c
		}
	}
	return *resource.NewQuantity(most/1000+1, resource.DecimalSI)
}

// listAllWorkflows lists every workflow (open and closed) by id with its
// latest run's status, retrying while a restarted server comes back.
func listAllWorkflows(t *testing.T, e *env) map[string]enumspb.WorkflowExecutionStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := map[string]enumspb.WorkflowExecutionStatus{}
		var token []byte
		var err error
		for {
			var resp *workflowservice.ListWorkflowExecutionsResponse
			resp, err = e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000, NextPageToken: token})
			if err != nil {
				break
			}
			// Newest first: the first run seen of an id is its latest.
			for _, ex := range resp.Executions {
				if _, seen := out[ex.Execution.WorkflowId]; !seen {
					out[ex.Execution.WorkflowId] = ex.Status
				}
			}
			if token = resp.NextPageToken; len(token) == 0 {
				break
			}
		}
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("list workflows: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// nodeClaimWorkflowOf finds a node's NodeClaim workflow by search
// attribute, waiting (up to a minute) for visibility: the NodeName
// attribute is upserted when the node registers and indexed after that.
func nodeClaimWorkflowOf(t *testing.T, e *env, node string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("NodeName = %q", node)})
		var ids []string
		if err == nil {
			for _, ex := range resp.Executions {
				if strings.HasPrefix(ex.Execution.WorkflowId, "nodeclaim/") {
					ids = append(ids, ex.Execution.WorkflowId)
				}
			}
		}
		sort.Strings(ids)
		if len(ids) > 0 {
			return ids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no nodeclaim workflow lists NodeName = %q: %v %v", node, resp, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// queryStatusRetrying queries a NodeClaim workflow's status until the
// worker, reconnected to the restarted server, answers (or a minute).
func queryStatusRetrying(e *env, id string) (workflows.NodeClaimStatus, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		var st workflows.NodeClaimStatus
		v, err := e.tc.QueryWorkflow(e.ctx, id, "", workflows.QueryStatus)
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil || time.Now().After(deadline) {
			return st, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}
