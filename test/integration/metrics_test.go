//go:build integration

package integration

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const metricsAddr = "127.0.0.1:18080"

// checkMetrics scrapes the controller's /metrics after the slice run and
// checks that the values moved with what happened: nodes launched and
// registered, EC2 calls timed, node gauges, and the Temporal SDK's own metrics.
func checkMetrics(t *testing.T, nodes int) {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	sum := func(name string, match map[string]string) float64 {
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
			}
		}
		return total
	}
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
		{"joinery_cloud_request_duration_seconds", map[string]string{"api": "CreateFleet", "code": ""}, want},
		{"joinery_provision_duration_seconds", nil, 1},
	}
	for _, c := range checks {
		if got := sum(c.name, c.match); got < c.min {
			t.Errorf("%s%v = %v, want >= %v", c.name, c.match, got, c.min)
		}
	}
	if got := sum("joinery_nodes_total", nil); got != want {
		t.Errorf("joinery_nodes_total = %v, want %v", got, want)
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
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
