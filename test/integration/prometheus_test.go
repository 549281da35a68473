//go:build integration

package integration

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/world"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const promMetricsAddr = "127.0.0.1:18094"

// guideQueries are the monitoring queries of the seed guide (Karpenter's
// older names and guides' names, served beside the v1 ones).
var guideQueries = []string{
	`karpenter_pods_state{state="pending"}`,
	`karpenter_nodes_total`,
	`histogram_quantile(0.99, rate(karpenter_provisioner_scheduling_duration_seconds_bucket[5m]))`,
	`karpenter_nodes_utilization{resource="cpu"}`,
	`karpenter_interruption_actions_performed_total`,
}

// A real Prometheus scrapes the worker every second while the examples
// are provisioned, a spot node is interrupted and inflate is scaled down
// (consolidation): every panel query and variable of
// deploy/dashboards/joinery.json and every seed-guide query then returns
// at least one series over the run, and every rule of
// deploy/prometheusrule.yaml evaluates without error on the real series.
func TestPrometheusAnswersTheDashboardAndTheGuide(t *testing.T) {
	bin := prometheusBinary(t)
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
		c.MetricsAddr = promMetricsAddr
	})
	prom, _ := startPrometheus(t, bin, e.addr(promMetricsAddr))
	start := time.Now()
	waitScraped(t, e.ctx, prom, time.Minute, `up{job="joinery"}`, 1)
	runExampleHistory(t, e, prom)
	r := promv1.Range{Start: start, End: time.Now(), Step: 2 * time.Second}
	panels, vars := dashboardExprs(t)
	if len(panels) < 40 || len(vars) < 2 {
		t.Fatalf("%d panel queries and %d variables in the dashboard: the parse missed some", len(panels), len(vars))
	}
	checkAnswers(t, e.ctx, prom, r, "panel", panels)
	guide := map[string]string{}
	for _, q := range guideQueries {
		guide[q] = q
	}
	checkAnswers(t, e.ctx, prom, r, "guide", guide)
	for name, v := range vars {
		vals, _, err := prom.LabelValues(e.ctx, v[1], []string{v[0]}, r.Start, r.End)
		if err != nil || len(vals) == 0 {
			t.Errorf("variable %s: label_values(%s, %s) = %v, %v", name, v[0], v[1], vals, err)
			continue
		}
		t.Logf("variable %s: %v", name, vals)
	}
	checkRulesHealthy(t, e.ctx, prom)
}

// runExampleHistory applies the examples (general-purpose consolidating
// after 5 s), interrupts a spot node, then scales inflate from 50 to 5,
// waiting each time until Prometheus has what the worker counted.
func runExampleHistory(t *testing.T, e *env, prom promv1.API) {
	t.Helper()
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml")
	for _, o := range objs {
		if o.GetKind() == "NodePool" && o.GetName() == "general-purpose" {
			setConsolidation(o, "5s", "")
		}
	}
	e.apply(t, objs)
	want, nss := world.ExpectedPods(objs)
	sctx, cancel := context.WithTimeout(e.ctx, 4*time.Minute)
	defer cancel()
	if _, err := world.WaitSettled(sctx, e.kc, want, nss); err != nil {
		t.Fatal(err)
	}
	spot, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelCapacityType + "=spot"})
	if err != nil {
		t.Fatal(err)
	}
	if len(spot.Items) == 0 {
		t.Fatal("no spot node after the examples: nothing to interrupt")
	}
	res, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: spot.Items[0].Name, Kind: world.SimSpot, Notice: world.DefaultNotice})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("spot warning for %s (%s)", spot.Items[0].Name, res.InstanceID)
	waitScraped(t, e.ctx, prom, 2*time.Minute, `karpenter_interruption_actions_performed_total`, 1)
	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "inflate", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitScraped(t, e.ctx, prom, 4*time.Minute, `karpenter_voluntary_disruption_decisions_total`, 1)
	waitScraped(t, e.ctx, prom, 2*time.Minute, `karpenter_nodeclaims_terminated_total`, 2)
}

// checkAnswers runs each query over r and wants at least one series. A
// counter the run moved last has had one scrape when the run ends, which
// increase() over 15 s cannot use: as a dashboard refreshes, a query with
// no series is asked again with the range ending later, for up to 30 s.
func checkAnswers(t *testing.T, ctx context.Context, prom promv1.API, r promv1.Range, kind string, queries map[string]string) {
	t.Helper()
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range names {
		q := grafanaVars.Replace(queries[n])
		got, err := seriesOver(ctx, prom, q, r)
		for err == nil && got == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Second)
			r.End = time.Now()
			got, err = seriesOver(ctx, prom, q, r)
		}
		switch {
		case err != nil:
			t.Errorf("%s %s: %s: %v", kind, n, q, err)
		case got == 0:
			t.Errorf("%s %s: %s: no series", kind, n, q)
		default:
			t.Logf("%s %-58s %3d series", kind, n, got)
		}
	}
}

// checkRulesHealthy wants every rule of the PrometheusRule loaded and
// evaluated without error on the worker's series.
func checkRulesHealthy(t *testing.T, ctx context.Context, prom promv1.API) {
	t.Helper()
	rules, err := prom.Rules(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			a, ok := r.(promv1.AlertingRule)
			if !ok {
				t.Errorf("group %s: rule %T, want alerting rules only", g.Name, r)
				continue
			}
			n++
			if a.Health != promv1.RuleHealthGood || a.LastError != "" || a.LastEvaluation.IsZero() {
				t.Errorf("alert %s: health %q, last error %q, last evaluated %s", a.Name, a.Health, a.LastError, a.LastEvaluation)
			}
			for _, al := range a.Alerts {
				t.Logf("alert %s: %s %v value %s", a.Name, al.State, al.Labels, al.Value)
			}
		}
	}
	if want := len(ruleSpecAlerts(t)); n != want {
		t.Errorf("Prometheus loaded %d alerting rules, the PrometheusRule has %d", n, want)
	}
}

// ruleSpecAlerts are the alert names of deploy/prometheusrule.yaml.
func ruleSpecAlerts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range alertLine.FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	return out
}
