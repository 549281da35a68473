//go:build integration

package integration

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/devlinks"
	"github.com/joinery/joinery/sim/world"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.temporal.io/api/workflowservice/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const browserMetricsAddr = "127.0.0.1:18095"

// nodesGraph is the index in devlinks.Graphs of the nodes-per-NodePool
// graph the test reads.
const nodesGraph = 1

// Headless Chromium loads the two links starter dev prints once the
// examples are provisioned (every NodePool's consolidation off, so the
// world holds still): the Temporal Web UI's workflow list filtered by the
// first NodePool shows exactly the workflows visibility lists for it, among
// them one per NodeClaim of that pool and none of another pool's; and
// Prometheus' prepared graphs, on their table view, show each NodePool's
// node count as the cluster has it.
func TestBrowserShowsTheWorld(t *testing.T) {
	chromium := chromiumBinary(t)
	promBin := prometheusBinary(t)
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.MetricsAddr = browserMetricsAddr })
	prom, promAddr := startPrometheus(t, promBin, e.addr(browserMetricsAddr))
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml")
	pool := ""
	for _, o := range objs {
		if o.GetKind() == "NodePool" {
			setConsolidation(o, "Never", "")
			pool = cmp.Or(pool, o.GetName())
		}
	}
	e.apply(t, objs)
	want, nss := world.ExpectedPods(objs)
	sctx, cancel := context.WithTimeout(e.ctx, 4*time.Minute)
	defer cancel()
	if _, err := world.WaitSettled(sctx, e.kc, want, nss); err != nil {
		t.Fatal(err)
	}
	checkWorkflowList(t, e, chromium, pool)
	checkNodesTable(t, e, chromium, prom, promAddr)
}

// checkWorkflowList loads the Web UI's workflow list filtered by pool and
// wants its rows to be the executions visibility lists for the same
// query, covering every NodeClaim workflow of pool's claims and none of
// another pool's.
func checkWorkflowList(t *testing.T, e *env, chromium, pool string) {
	t.Helper()
	mine, others := claimWorkflowIDs(t, e, pool)
	if len(mine) == 0 || len(others) == 0 {
		t.Fatalf("NodeClaim workflows of %s: %v, of the other pools: %v; the examples give both nodes", pool, mine, others)
	}
	query := devlinks.NodePoolQuery(pool)
	var listed map[string]string
	waitFor(t, time.Minute, "visibility to list every NodeClaim workflow of "+pool, func() bool {
		listed = visibleRuns(t, e, query)
		return hasAll(listed, mine)
	})
	link := devlinks.TemporalWorkflows(e.w.Temporal.UIAddress, "default", query)
	shown := webUIRows(t, dumpUntil(t, e.ctx, chromium, link, hasWorkflowRows))
	t.Logf("Web UI: %d rows, visibility %d, %s's NodeClaims %d", len(shown), len(listed), pool, len(mine))
	if !maps.Equal(shown, listed) {
		t.Errorf("Web UI rows (workflow id: run id) %v, visibility lists %v", shown, listed)
	}
	for _, id := range others {
		if _, ok := shown[id]; ok {
			t.Errorf("the list filtered by %s shows %s, another pool's", pool, id)
		}
	}
}

// claimWorkflowIDs are the NodeClaim workflow ids of the cluster's
// NodeClaims in pool and in the other pools.
func claimWorkflowIDs(t *testing.T, e *env, pool string) (mine, others []string) {
	t.Helper()
	for _, c := range e.nodeClaims(t) {
		id := "nodeclaim/" + c.GetName()
		if c.GetLabels()[apiv1.LabelNodePool] == pool {
			mine = append(mine, id)
		} else {
			others = append(others, id)
		}
	}
	return mine, others
}

// visibleRuns is workflow id -> run id of the executions query matches.
func visibleRuns(t *testing.T, e *env, query string) map[string]string {
	t.Helper()
	resp, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, x := range resp.Executions {
		out[x.Execution.WorkflowId] = x.Execution.RunId
	}
	return out
}

func hasAll(m map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// checkNodesTable waits until Prometheus has each NodePool's node count
// as the cluster has it, then loads the prepared graphs on their table
// view and wants the nodes graph's table to show those counts.
func checkNodesTable(t *testing.T, e *env, chromium string, prom promv1.API, promAddr string) {
	t.Helper()
	expr := devlinks.Graphs[nodesGraph]
	if !strings.Contains(expr, `resource_type="nodes"`) {
		t.Fatalf("devlinks.Graphs[%d] = %s, not the nodes-per-NodePool graph", nodesGraph, expr)
	}
	counts := nodesPerPool(t, e)
	waitFor(t, 2*time.Minute, fmt.Sprintf("Prometheus to have %s = %v", expr, counts), func() bool {
		return maps.Equal(instantByPool(e.ctx, prom, expr), counts)
	})
	link := devlinks.PrometheusGraphs(promAddr, devlinks.Table)
	tables := promTables(dumpUntil(t, e.ctx, chromium, link, func(dom string) bool { return len(promTables(dom)) == len(devlinks.Graphs) }))
	shown := map[string]string{}
	for _, r := range tables[nodesGraph] {
		shown[r[0]] = r[1]
	}
	wantRows := map[string]string{}
	for p, n := range counts {
		wantRows[fmt.Sprintf("{nodepool=%q}", p)] = fmt.Sprint(n)
	}
	t.Logf("Prometheus table of %s: %v", expr, shown)
	if !maps.Equal(shown, wantRows) {
		t.Errorf("the table of %s shows %v, the cluster has %v", expr, shown, wantRows)
	}
}

// nodesPerPool counts the cluster's Nodes per NodePool, 0 for a NodePool
// without any.
func nodesPerPool(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	pools, err := dynamicClient(t, e).Resource(apiv1.NodePoolGVR).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range pools.Items {
		out[p.GetName()] = 0
	}
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if p, ok := n.Labels[apiv1.LabelNodePool]; ok {
			out[p]++
		}
	}
	t.Logf("nodes per NodePool: %v (pools %v)", out, slices.Sorted(maps.Keys(out)))
	return out
}

// instantByPool is expr's value per nodepool label now (nil on error).
func instantByPool(ctx context.Context, prom promv1.API, expr string) map[string]float64 {
	v, _, err := prom.Query(ctx, expr, time.Now())
	vec, ok := v.(model.Vector)
	if err != nil || !ok {
		return nil
	}
	out := map[string]float64{}
	for _, s := range vec {
		out[string(s.Metric["nodepool"])] = float64(s.Value)
	}
	return out
}
