package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// promqlWords are PromQL's keywords, and series Prometheus itself makes
// (up), that name no metric of Joinery.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "bool": true,
	"and": true, "or": true, "unless": true, "offset": true, "atan2": true, "inf": true, "nan": true,
}

// promSeries are series Prometheus records itself, not the worker.
var promSeries = map[string]bool{"up": true}

var (
	promString   = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\[\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promOffset   = regexp.MustCompile(`\boffset\s+-?[0-9a-zA-Z]+`)
	promNumber   = regexp.MustCompile(`(^|[^A-Za-z0-9_:])(\d+(\.\d+)?([eE][+-]?\d+)?|0x[0-9a-fA-F]+)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	labelValues  = regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`)
)

// metricNames returns the metric names a PromQL expression reads: what is
// left once strings, label matchers, ranges, grouping label lists and
// numbers are taken out, less function names (an identifier before "(")
// and keywords. It also checks the brackets balance.
func metricNames(expr string) ([]string, error) {
	depth := map[rune]int{}
	for _, r := range promString.ReplaceAllString(expr, `""`) {
		switch r {
		case '(', '{', '[':
			depth[r]++
		case ')':
			depth['(']--
		case '}':
			depth['{']--
		case ']':
			depth['[']--
		}
		for _, d := range depth {
			if d < 0 {
				return nil, fmt.Errorf("unbalanced brackets in %q", expr)
			}
		}
	}
	for _, d := range depth {
		if d != 0 {
			return nil, fmt.Errorf("unbalanced brackets in %q", expr)
		}
	}
	s := promString.ReplaceAllString(expr, " ")
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	s = promOffset.ReplaceAllString(s, " ")
	s = promNumber.ReplaceAllString(s, "$1 ")
	seen := map[string]bool{}
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		word := s[loc[0]:loc[1]]
		if promqlWords[strings.ToLower(word)] {
			continue
		}
		if rest := strings.TrimLeft(s[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or an aggregation
		}
		if !seen[word] {
			seen[word] = true
			out = append(out, word)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no metric in %q", expr)
	}
	return out, nil
}

func TestMetricNamesTokenizer(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (nodepool) (rate(karpenter_nodeclaims_created_total{nodepool=~"$nodepool", reason!="a{b}"}[$__rate_interval]))`: {"karpenter_nodeclaims_created_total"},
		`histogram_quantile(0.99, sum by (le, controller) (rate(karpenter_scheduler_scheduling_duration_seconds_bucket[5m])))`:  {"karpenter_scheduler_scheduling_duration_seconds_bucket"},
		`(count(a_total{x="1"}) or vector(0)) / count(b) > 1e-3`:                                                                {"a_total", "b"},
		`x and on () (sum(increase(y[6h])) or vector(0)) == 0`:                                                                  {"x", "y"},
		`absent(up{job=~".*joinery.*"} == 1)`:                                                                                   {"up"},
		`max(temporal_workflow_task_execution_latency_seconds{quantile="0.99"}) without (instance) offset 5m`:                   {"temporal_workflow_task_execution_latency_seconds"},
	} {
		got, err := metricNames(expr)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("metricNames(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{`sum(rate(x[5m])`, `x{a="1"`, `sum()`} {
		if _, err := metricNames(bad); err == nil {
			t.Errorf("metricNames(%q): no error", bad)
		}
	}
}

// scrapedMetrics reads testdata/scraped-metrics.txt: the metrics the
// integration tests find on the worker's /metrics (each line: a name and
// the test that checks it is there; test/integration checkListed).
func scrapedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("testdata/scraped-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			t.Fatalf("scraped-metrics.txt: %q: want a name and a test", line)
		}
		out[f[0]] = true
	}
	return out
}

type grafanaDashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	Targets    []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

// dashboardQueries returns every query of the dashboard (panel targets
// and template variables) by where it is.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("dashboards/joinery.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard: title %q uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	out := map[string]string{}
	ids := map[int]bool{}
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type != "row" && (len(p.Targets) == 0 || p.Datasource["uid"] != "${datasource}") {
				t.Errorf("panel %q: %d targets, datasource %v", p.Title, len(p.Targets), p.Datasource)
			}
			for _, tg := range p.Targets {
				out[fmt.Sprintf("panel %q %s", p.Title, tg.RefID)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q.Query)
			continue
		}
		out["variable "+v.Name] = m[1]
	}
	return out
}

// prometheusRule is monitoring.coreos.com/v1 PrometheusRule, the fields
// the operator reads (strict: any other field is an error).
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace,omitempty"`
		Labels    map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec ruleSpec `json:"spec"`
}

type ruleSpec struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert       string            `json:"alert,omitempty"`
			Record      string            `json:"record,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

var alertName = regexp.MustCompile(`^Joinery[A-Z][A-Za-z]+$`)

// TestPrometheusRuleIsValid checks deploy/prometheusrule.yaml is a valid
// PrometheusRule (the operator's fields only, names unique, durations
// Prometheus parses, severity and summary on every alert) with the same
// groups as the chart's file.
func TestPrometheusRuleIsValid(t *testing.T) {
	b, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.UnmarshalStrict(b, &pr); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name == "" {
		t.Errorf("apiVersion %q kind %q name %q", pr.APIVersion, pr.Kind, pr.Metadata.Name)
	}
	groups, alerts := map[string]bool{}, map[string]bool{}
	for _, g := range pr.Spec.Groups {
		if g.Name == "" || groups[g.Name] || len(g.Rules) == 0 {
			t.Errorf("group %q: empty, unnamed or twice", g.Name)
		}
		groups[g.Name] = true
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("group %s: a rule needs exactly one of alert and record: %+v", g.Name, r)
				continue
			}
			if !alertName.MatchString(r.Alert) || alerts[r.Alert] {
				t.Errorf("alert %q: not Joinery<CamelCase>, or twice", r.Alert)
			}
			alerts[r.Alert] = true
			if _, err := model.ParseDuration(r.For); err != nil {
				t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
				t.Errorf("alert %s: severity %q", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: no summary or description", r.Alert)
			}
			if _, err := metricNames(r.Expr); err != nil {
				t.Errorf("alert %s: %v", r.Alert, err)
			}
		}
	}
	for _, want := range []string{"JoineryPodsPendingTooLong", "JoineryNodeClaimsFailingToLaunch", "JoineryHighInsufficientCapacityRate",
		"JoineryConsolidationBlocked", "JoineryWorkerDown"} {
		if !alerts[want] {
			t.Errorf("no alert %s", want)
		}
	}
	chart, err := os.ReadFile("chart/joinery/files/prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec ruleSpec
	if err := yaml.UnmarshalStrict(chart, &spec); err != nil {
		t.Fatalf("chart rules: %v", err)
	}
	if !reflect.DeepEqual(spec, pr.Spec) {
		t.Error("deploy/prometheusrule.yaml and deploy/chart/joinery/files/prometheus-rules.yaml hold different rules")
	}
}

// TestDashboardAndRulesUseScrapedMetrics checks that every metric the
// dashboard's queries and the alerts read is one the integration tests
// scrape from the worker (testdata/scraped-metrics.txt), so no panel or
// alert reads a series Joinery does not serve.
func TestDashboardAndRulesUseScrapedMetrics(t *testing.T) {
	scraped := scrapedMetrics(t)
	queries := dashboardQueries(t)
	b, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			queries["alert "+r.Alert] = r.Expr
		}
	}
	used := map[string]bool{}
	for where, expr := range queries {
		names, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		for _, n := range names {
			used[n] = true
			if !scraped[n] && !promSeries[n] {
				t.Errorf("%s reads %s, which no scrape test sees", where, n)
			}
		}
	}
	var names []string
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d queries read %d metrics: %s", len(queries), len(names), strings.Join(names, " "))
	for _, want := range []string{"karpenter_nodepools_cost_total", "joinery_provision_duration_seconds_bucket",
		"karpenter_voluntary_disruption_decisions_total", "karpenter_interruption_received_messages_total",
		"temporal_workflow_task_execution_latency_seconds"} {
		if !used[want] {
			t.Errorf("the dashboard and alerts do not read %s", want)
		}
	}
}

// TestKarpenterCapacityDashboardMetricsAreServed: the karpenter_* metrics
// the panels of Karpenter's published capacity dashboard
// (karpenter-capacity-dashboard.json, the AWS provider's getting-started
// guide) read, with the labels they select on, are all scraped from the
// worker.
func TestKarpenterCapacityDashboardMetricsAreServed(t *testing.T) {
	scraped := scrapedMetrics(t)
	for _, name := range []string{
		"karpenter_nodes_created_total", "karpenter_nodes_terminated_total", "karpenter_voluntary_disruption_eligible_nodes",
		"karpenter_nodeclaims_disrupted_total", "karpenter_voluntary_disruption_decisions_total", "karpenter_pods_state",
		"karpenter_nodepools_usage", "karpenter_nodepools_limit", "karpenter_nodes_allocatable",
		"karpenter_nodes_total_daemon_requests", "karpenter_nodes_total_pod_requests",
	} {
		if !scraped[name] {
			t.Errorf("%s (read by Karpenter's capacity dashboard) is not scraped", name)
		}
	}
}
