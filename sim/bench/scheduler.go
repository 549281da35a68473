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

// profileScheduler writes a CPU profile of the kube-scheduler, taken over
// d starting after wait, to file: where its time goes while the burst is
// placed.
func profileScheduler(ctx context.Context, url, file string, wait, d time.Duration) error {
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
		return fmt.Errorf("kube-scheduler profile: %s", resp.Status)
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
	resp, err := schedulerClient.Get(url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kube-scheduler metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
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
	return out, nil
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
