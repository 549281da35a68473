package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinery/joinery/internal/promtest"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// promtool finds Prometheus' promtool (Debian's prometheus package;
// hack/prometheus.sh installs it). Without it the test is skipped, unless
// JOINERY_TEST_PROMETHEUS is set (CI sets it), when it fails.
func promtool(t *testing.T) string {
	return promtest.Binary(t, "promtool", "check the rules with it")
}

// ruleTests is the part of a promtool test file the coverage check reads.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			EvalTime  string          `json:"eval_time"`
			Alertname string          `json:"alertname"`
			ExpAlerts []expectedAlert `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

type expectedAlert struct {
	ExpLabels map[string]string `json:"exp_labels"`
}

// TestPrometheusRulePassesPromtool writes the PrometheusRule's spec as the
// plain rule file Prometheus reads, checks it with `promtool check rules`,
// and runs `promtool test rules` on testdata/prometheusrule-test.yaml,
// whose synthetic series make every alert fire and then resolve.
func TestPrometheusRulePassesPromtool(t *testing.T) {
	bin := promtool(t)
	b, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.UnmarshalStrict(b, &pr); err != nil {
		t.Fatal(err)
	}
	spec, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
		}
	}
	out, err := exec.Command(bin, "check", "rules", filepath.Join(dir, "rules.yaml")).CombinedOutput()
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(alerts)); err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("promtool check rules (want %q): %v\n%s", want, err, out)
	}
	tests, err := os.ReadFile("testdata/prometheusrule-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "test", "rules", "test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	checkFiresAndResolves(t, tests, alerts)
}

// checkFiresAndResolves checks that the promtool tests have, for every
// alert, an evaluation where it fires and a later one, in the same test,
// where it has resolved.
func checkFiresAndResolves(t *testing.T, tests []byte, alerts []string) {
	t.Helper()
	var rt ruleTests
	if err := yaml.Unmarshal(tests, &rt); err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for i, tc := range rt.Tests {
		fired := map[string]model.Duration{}
		for _, a := range tc.AlertRuleTest {
			at, err := model.ParseDuration(a.EvalTime)
			if err != nil {
				t.Errorf("test %d: %s eval_time %q: %v", i, a.Alertname, a.EvalTime, err)
				continue
			}
			if len(a.ExpAlerts) > 0 {
				if _, ok := fired[a.Alertname]; !ok {
					fired[a.Alertname] = at
				}
			} else if f, ok := fired[a.Alertname]; ok && at > f {
				covered[a.Alertname] = true
			}
		}
	}
	for _, a := range alerts {
		if !covered[a] {
			t.Errorf("alert %s: no promtool test shows it firing and then resolved (testdata/prometheusrule-test.yaml)", a)
		}
	}
}
