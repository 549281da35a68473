// Package devlinks builds the links starter dev prints for people: the
// Temporal Web UI's workflow list filtered by a NodePool, and Prometheus'
// graph page with the dashboard's main graphs prepared. The
// headless-browser integration test loads the same links.
package devlinks

import (
	"fmt"
	"net/url"
	"strings"
)

// Graphs are the dashboard's main graphs (deploy/dashboards/joinery.json)
// as Prometheus expressions.
var Graphs = []string{
	`sum(karpenter_nodepools_cost_total)`,
	`sum by (nodepool) (karpenter_nodepools_usage{resource_type="nodes"})`,
	`sum(karpenter_scheduler_unschedulable_pods_count)`,
	`histogram_quantile(0.99, sum by (le) (rate(joinery_provision_duration_seconds_bucket[5m])))`,
	`sum by (decision, reason) (increase(karpenter_voluntary_disruption_decisions_total[5m]))`,
}

// View is the tab of Prometheus' graph page an expression opens on.
type View int

const (
	Graph View = 0 // the graph over time
	Table View = 1 // the latest values, as text
)

// PrometheusGraphs is the graph page of the Prometheus at addr (host:port)
// with Graphs prepared on view, over the last hour.
func PrometheusGraphs(addr string, view View) string {
	q := url.Values{}
	for i, expr := range Graphs {
		q.Set(fmt.Sprintf("g%d.expr", i), expr)
		q.Set(fmt.Sprintf("g%d.tab", i), fmt.Sprint(int(view)))
		q.Set(fmt.Sprintf("g%d.range_input", i), "1h")
	}
	return "http://" + addr + "/graph?" + encode(q)
}

// NodePoolQuery is the visibility query for the workflows that touched
// pool's nodes (the NodePool search attribute).
func NodePoolQuery(pool string) string { return fmt.Sprintf("NodePool = %q", pool) }

// TemporalWorkflows is the workflow list of the Web UI at ui
// (http://host:port) in namespace, filtered by query ("": all).
func TemporalWorkflows(ui, namespace, query string) string {
	u := ui + "/namespaces/" + url.PathEscape(namespace) + "/workflows"
	if query == "" {
		return u
	}
	return u + "?" + encode(url.Values{"query": {query}})
}

// encode is q's query string with spaces as %20: Prometheus' UI reads a
// '+' literally.
func encode(q url.Values) string { return strings.ReplaceAll(q.Encode(), "+", "%20") }
