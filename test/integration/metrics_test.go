//go:build integration

package integration

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const metricsAddr = "127.0.0.1:18080"

// checkMetrics scrapes the controller's /metrics after the slice run and
// checks that the values moved with what happened: nodes launched and
// registered, EC2 calls timed, node gauges, and the Temporal SDK's own metrics.
func checkMetrics(t *testing.T, e *env, nodes int) {
	t.Helper()
	// The first consolidation pass that evaluates comes once no pod is
	// pending and the new nodes' nominations have lapsed: wait for it.
	fams := scrapeFamilies(t, e.addr(metricsAddr))
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if sumOf(fams, "karpenter_voluntary_disruption_decision_evaluation_duration_seconds", nil) >= 1 && fams["joinery_disruption_blocked_nodes"] != nil {
			break
		}
		fams = scrapeFamilies(t, e.addr(metricsAddr))
	}
	sum := func(name string, match map[string]string) float64 { return sumOf(fams, name, match) }
	want := float64(nodes)
	checks := []struct {
		name  string
		match map[string]string
		min   float64
	}{
		{"joinery_nodeclaims_created_total", nil, want},
		{"joinery_nodeclaims_launched_total", nil, want},
		{"joinery_nodeclaims_registered_total", nil, want},
		{"joinery_nodes_total", nil, want},
		{"joinery_nodes_allocatable", map[string]string{"resource": "cpu"}, want},
		{"joinery_nodes_requests", map[string]string{"resource": "pods"}, 64},
		// Identical launches share a CreateFleet: at least one call.
		{"joinery_cloud_request_duration_seconds", map[string]string{"api": "CreateFleet", "code": ""}, 1},
		{"joinery_provision_duration_seconds", nil, 1},
		// Karpenter's names, for its dashboards and alerts.
		{"karpenter_nodeclaims_created_total", map[string]string{"reason": "provisioned", "min_values_relaxed": "false"}, want},
		{"karpenter_nodes_created_total", nil, want},
		{"karpenter_nodes_allocatable", map[string]string{"resource_type": "cpu", "managed": "true"}, want},
		{"karpenter_nodes_allocatable", map[string]string{"resource_type": "memory"}, 3 * 16 << 30},
		{"karpenter_nodes_total_pod_requests", map[string]string{"resource_type": "pods"}, 64},
		{"karpenter_nodes_total_pod_requests", map[string]string{"resource_type": "cpu"}, 50},
		{"karpenter_nodes_total_daemon_requests", map[string]string{"resource_type": "pods"}, 0},
		{"karpenter_nodes_system_overhead", map[string]string{"resource_type": "memory"}, 1},
		{"karpenter_nodes_current_lifetime_seconds", nil, 0},
		{"karpenter_pods_state", map[string]string{"phase": "Running", "scheduled": "true", "managed": "true"}, 64},
		{"karpenter_pods_state", map[string]string{"nodepool": "gpu", "ready": "true"}, 1},
		// usage{nodes} is polled below (status.resources, written every 5 s).
		{"karpenter_nodepools_usage", map[string]string{"resource_type": "cpu", "nodepool": "general-purpose"}, 1},
		{"karpenter_nodepools_limit", map[string]string{"resource_type": "cpu", "nodepool": "general-purpose"}, 1000},
		{"karpenter_nodepools_limit", map[string]string{"resource_type": "memory", "nodepool": "general-purpose"}, 2000 << 30},
		{"karpenter_nodepools_cost_total", nil, 0.01},
		{"karpenter_cluster_state_node_count", nil, want},
		{"karpenter_cluster_utilization_percent", map[string]string{"resource_type": "cpu"}, 1},
		{"karpenter_scheduler_scheduling_duration_seconds", map[string]string{"controller": "provisioner"}, 1},
		{"karpenter_provisioner_scheduling_duration_seconds", nil, 1},
		{"karpenter_nodes_total", nil, want},
		{"karpenter_nodes_utilization", map[string]string{"resource": "cpu"}, 0.01},
		{"karpenter_scheduler_queue_depth", map[string]string{"controller": "provisioner"}, 0},
		{"karpenter_scheduler_unschedulable_pods_count", map[string]string{"controller": "provisioner"}, 0},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"controller": "nodeclaim.lifecycle", "method": "Create", "provider": "aws"}, want},
		{"karpenter_voluntary_disruption_decision_evaluation_duration_seconds", nil, 1},
	}
	for _, c := range checks {
		if got := sum(c.name, c.match); got < c.min {
			t.Errorf("%s%v = %v, want >= %v", c.name, c.match, got, c.min)
		}
	}
	t.Logf("karpenter_* after the slice: %v nodes, %.4f USD/hour (karpenter_nodepools_cost_total), cpu utilization %.1f%%, %v pods_state series, %v solves",
		sum("karpenter_cluster_state_node_count", nil), sum("karpenter_nodepools_cost_total", nil),
		sum("karpenter_cluster_utilization_percent", map[string]string{"resource_type": "cpu"}), float64(len(fams["karpenter_pods_state"].GetMetric())),
		sum("karpenter_scheduler_scheduling_duration_seconds", map[string]string{"controller": "provisioner"}))
	// The node gauges count the nodes there are now: the cluster may have
	// moved since the slice was listed (a late claim registering, a
	// consolidation), so they are compared with a fresh count until they
	// agree. karpenter_nodepools_usage{nodes} is status.resources.nodes
	// (written every 5 s by the leader): every node, once the last is counted.
	var gauges map[string]float64
	now := 0
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		now = joineryNodes(t, e)
		f := scrapeFamilies(t, e.addr(metricsAddr))
		gauges = map[string]float64{
			"joinery_nodes_total":                sumOf(f, "joinery_nodes_total", nil),
			"karpenter_cluster_state_node_count": sumOf(f, "karpenter_cluster_state_node_count", nil),
			"karpenter_nodepools_usage{nodes}":   sumOf(f, "karpenter_nodepools_usage", map[string]string{"resource_type": "nodes"}),
		}
		agree := now == joineryNodes(t, e)
		for name, v := range gauges {
			agree = agree && v == gaugeWant(name, now)
		}
		if agree || time.Now().After(deadline) {
			break
		}
	}
	if float64(now) != want {
		t.Logf("%d Joinery nodes now, %v when the slice was listed", now, want)
	}
	for name, v := range gauges {
		if v != gaugeWant(name, now) {
			t.Errorf("%s = %v, want %v (the Joinery nodes, and the system nodes in the cluster's count)", name, v, gaugeWant(name, now))
		}
	}
	// The Karpenter gauges of Joinery's nodes carry what the joinery ones say.
	for _, r := range []string{"cpu", "memory", "pods"} {
		managed := map[string]string{"resource_type": r, "managed": "true"}
		if j, k := sum("joinery_nodes_allocatable", map[string]string{"resource": r}), sum("karpenter_nodes_allocatable", managed); math.Abs(j-k) > 1e-9*j {
			t.Errorf("allocatable %s: joinery %v, karpenter %v", r, j, k)
		}
		if j, k := sum("joinery_nodes_requests", map[string]string{"resource": r}), sum("karpenter_nodes_total_pod_requests", managed); math.Abs(j-k) > 1e-9*j {
			t.Errorf("requests %s: joinery %v, karpenter %v", r, j, k)
		}
	}
	sdk := 0
	for name := range fams {
		if strings.HasPrefix(name, "temporal_") {
			sdk++
		}
	}
	if sdk < 5 {
		t.Errorf("only %d temporal_* SDK metric families on /metrics", sdk)
	}
	checkListed(t, fams, "slice")
}

// gaugeWant is a node gauge's value with joinery nodes launched:
// karpenter_cluster_state_node_count counts every node of the cluster, as
// Karpenter's cluster state does, the system nodes too.
func gaugeWant(name string, joinery int) float64 {
	if name == "karpenter_cluster_state_node_count" {
		return float64(joinery + systemNodes)
	}
	return float64(joinery)
}

// scrapeFamilies parses a controller's /metrics.
func scrapeFamilies(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// sumOf sums the samples of a family whose labels match (a histogram or
// summary counts its observations); -1 when the family is absent.
func sumOf(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	total := 0.0
next:
	for _, m := range f.Metric {
		for k, v := range match {
			if label(m, k) != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			total += float64(m.Summary.GetSampleCount())
		}
	}
	return total
}

// checkListed checks that every metric deploy/testdata/scraped-metrics.txt
// says the test scrapes (its second field) is on the scrape, so the
// dashboard and alert queries checked against that list (deploy's
// TestDashboardAndRulesUseScrapedMetrics) read series Joinery serves.
func checkListed(t *testing.T, fams map[string]*dto.MetricFamily, test string) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/testdata/scraped-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for name, f := range fams {
		have[name] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			have[name+"_bucket"], have[name+"_sum"], have[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			have[name+"_sum"], have[name+"_count"] = true, true
		}
	}
	if out := os.Getenv("JOINERY_SCRAPED_OUT"); out != "" { // what the scrape holds, to update the list
		if f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			for name := range have {
				fmt.Fprintf(f, "%s %s\n", name, test)
			}
			f.Close()
		}
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || f[1] != test {
			continue
		}
		n++
		if !have[f[0]] {
			t.Errorf("%s is listed as scraped by %s but is not on /metrics", f[0], test)
		}
	}
	if n == 0 {
		t.Errorf("no metric listed for %s in deploy/testdata/scraped-metrics.txt", test)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// joineryNodes counts the nodes Joinery launched (label karpenter.sh/nodepool).
func joineryNodes(t *testing.T, e *env) int {
	t.Helper()
	l, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}
