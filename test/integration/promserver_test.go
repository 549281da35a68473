//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/joinery/joinery/internal/promtest"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// prometheusBinary finds Debian's prometheus (hack/prometheus.sh installs
// it). Without it the test is skipped, unless JOINERY_TEST_PROMETHEUS is
// set (CI sets it), when it fails.
func prometheusBinary(t *testing.T) string {
	return promtest.Binary(t, "prometheus", "run the dashboard and alerts on it")
}

// startPrometheus runs a Prometheus that scrapes the worker's /metrics at
// target every second, as job "joinery" (the alerts' job matcher), and
// evaluates deploy/prometheusrule.yaml's rules every second; it returns
// its API and its address (host:port).
func startPrometheus(t *testing.T, bin, target string) (promv1.API, string) {
	t.Helper()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, ruleSpec(t, "../../deploy/prometheusrule.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: joinery
    static_configs: [{targets: [%q]}]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	c, err := api.NewClient(api.Config{Address: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(c), addr
}

// ruleSpec is a PrometheusRule's spec: the plain rule file Prometheus reads.
func ruleSpec(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := yaml.JSONToYAML(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// seriesOver is the number of series query returns over r (a range
// query, as a Grafana time series panel asks).
func seriesOver(ctx context.Context, p promv1.API, query string, r promv1.Range) (int, error) {
	v, _, err := p.QueryRange(ctx, query, r)
	if err != nil {
		return 0, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return 0, fmt.Errorf("result is a %s, not a matrix", v.Type())
	}
	return len(m), nil
}

// grafanaVars substitutes the dashboard's variables as Grafana does with
// "All" selected ($job, $nodepool: their allValue .*) and $__rate_interval
// as Grafana computes it for a 1 s scrape interval and the query's step
// (max(step + scrape interval, 4 x scrape interval)), rounded up to 15 s.
var grafanaVars = strings.NewReplacer("$__rate_interval", "15s", "$nodepool", ".*", "$job", ".*", "${nodepool}", ".*", "${job}", ".*")

// dashboardExprs are deploy/dashboards/joinery.json's panel queries by
// panel title and refId, and its label_values(metric, label) variables.
func dashboardExprs(t *testing.T) (panels map[string]string, vars map[string][2]string) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/dashboards/joinery.json")
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string
		Targets []struct{ Expr, RefID string }
		Panels  []json.RawMessage
	}
	var d struct {
		Panels     []json.RawMessage
		Templating struct {
			List []struct {
				Name, Definition string
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	panels, vars = map[string]string{}, map[string][2]string{}
	var walk func([]json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatal(err)
			}
			for _, tg := range p.Targets {
				panels[fmt.Sprintf("%s/%s", p.Title, tg.RefID)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	lv := regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$`)
	for _, v := range d.Templating.List {
		if m := lv.FindStringSubmatch(v.Definition); m != nil {
			vars[v.Name] = [2]string{m[1], m[2]}
		}
	}
	return panels, vars
}

// waitScraped waits up to d until Prometheus has query's series summing
// to at least min (what the worker counts reaches Prometheus a scrape later).
func waitScraped(t *testing.T, ctx context.Context, p promv1.API, d time.Duration, query string, min float64) {
	t.Helper()
	waitFor(t, d, fmt.Sprintf("Prometheus to have %s >= %v", query, min), func() bool {
		v, _, err := p.Query(ctx, query, time.Now())
		if err != nil {
			return false
		}
		vec, ok := v.(model.Vector)
		sum := 0.0
		for _, s := range vec {
			sum += float64(s.Value)
		}
		return ok && len(vec) > 0 && sum >= min
	})
}

var alertLine = regexp.MustCompile(`(?m)^\s*-\s*alert:\s*(\S+)\s*$`)
