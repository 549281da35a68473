package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// schedulerClient talks to the local kube-scheduler's self-signed endpoint.
var schedulerClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed

// fetchProfile writes a CPU profile from a Go /debug/pprof/ endpoint at
// url (the kube-scheduler's, the worker's), taken over d starting after
// wait, to file.
func fetchProfile(ctx context.Context, url, file string, wait, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", url, int(d.Seconds())), nil)
	if err != nil {
		return err
	}
	resp, err := schedulerClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile from %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// schedulerAttempts are the kube-scheduler's scheduling attempts by result
// (scheduled, unschedulable, error) and its preemption attempts.
func schedulerAttempts(url string) (map[string]float64, error) {
	fams, err := schedulerMetrics(url)
	if err != nil {
		return nil, err
	}
	return attempts(fams), nil
}

func attempts(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	if f := fams["scheduler_schedule_attempts_total"]; f != nil {
		for _, m := range f.GetMetric() {
			out[labelOf(m, "result")] += m.GetCounter().GetValue()
		}
	}
	if f := fams["scheduler_preemption_attempts_total"]; f != nil {
		for _, m := range f.GetMetric() {
			out["preemption"] += m.GetCounter().GetValue()
		}
	}
	return out
}

// requeues counts the pods the kube-scheduler moved into its queues, by
// the event that moved them: what sends pending pods back for another
// attempt.
func requeues(url string) (map[string]float64, error) {
	fams, err := schedulerMetrics(url)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	if f := fams["scheduler_queue_incoming_pods_total"]; f != nil {
		for _, m := range f.GetMetric() {
			out[labelOf(m, "event")] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// schedulerMetrics reads the kube-scheduler's /metrics.
func schedulerMetrics(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := schedulerClient.Get(url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kube-scheduler metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// QueueSample is the kube-scheduler's queue and attempts so far at a
// moment of the run: whether pending pods wait in its active queue (it is
// busy) or among the unschedulable (no event has sent them back).
type QueueSample struct {
	At            time.Duration `json:"at"` // from the apply
	Active        float64       `json:"active"`
	Backoff       float64       `json:"backoff"`
	Unschedulable float64       `json:"unschedulable"`
	Scheduled     float64       `json:"scheduled"`
	Failed        float64       `json:"failed"` // unschedulable attempts
}

// sampleQueue reads the scheduler's queue every `every` until ctx ends.
func sampleQueue(ctx context.Context, url string, every time.Duration) []QueueSample {
	var out []QueueSample
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		fams, err := schedulerMetrics(url)
		if err != nil {
			continue
		}
		s := QueueSample{At: time.Since(start).Round(time.Second)}
		if f := fams["scheduler_pending_pods"]; f != nil {
			for _, m := range f.GetMetric() {
				switch labelOf(m, "queue") {
				case "active":
					s.Active = m.GetGauge().GetValue()
				case "backoff":
					s.Backoff = m.GetGauge().GetValue()
				case "unschedulable":
					s.Unschedulable = m.GetGauge().GetValue()
				}
			}
		}
		a := attempts(fams)
		s.Scheduled, s.Failed = a["scheduled"], a["unschedulable"]
		out = append(out, s)
	}
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
