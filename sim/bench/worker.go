package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/joinery/joinery/sim/world"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// buildWorker builds the worker command (./worker, what the container
// image runs) into dir: the bench measures that binary, not one that also
// links the local world's Temporal server and simulators.
func buildWorker(dir string) (string, error) {
	exe := filepath.Join(dir, "joinery-worker")
	cmd := exec.Command("go", "build", "-o", exe, "./worker")
	cmd.Dir = filepath.Dir(repoFile("go.mod"))
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./worker: %w\n%s", err, out)
	}
	return exe, nil
}

// stop asks the worker to stop (SIGTERM: its profiles are written) and
// kills it after 20 s.
func (w *workerProc) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// startWorker runs this binary as the worker against w and waits until it
// is ready (its /readyz answers 200).
func startWorker(ctx context.Context, w *world.World, exe, metricsAddr string, prof profiles) (*workerProc, error) {
	logf, err := os.Create(filepath.Join(w.StateDir, "joinery.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := append(w.WorkerArgs("joinery-bench"), "--metrics-addr", metricsAddr, "--disruption=false", "--log-level", "info")
	args = append(args, workerFlags...)
	if prof.CPU != "" {
		args = append(args, "--cpuprofile", prof.CPU)
	}
	if prof.Heap != "" {
		args = append(args, "--memprofile", prof.Heap)
	}
	if prof.Rest != "" {
		args = append(args, "--enable-profiling")
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), w.WorkerKeyEnv()...) // its AWS key, as a pod gets it
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wp := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(wp.done) }()
	for {
		resp, err := http.Get("http://" + metricsAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return wp, nil
			}
		}
		select {
		case <-wp.done:
			return nil, fmt.Errorf("worker exited before it was ready (its log: %s)", logf.Name())
		case <-ctx.Done():
			wp.stop()
			return nil, fmt.Errorf("worker not ready: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// profiles are where the bench writes the worker's CPU profile of the
// run and of its rest, its heap profile and the kube-scheduler's CPU
// profile ("": none).
type profiles struct{ CPU, Heap, Scheduler, Rest string }

// workerFlags are extra worker flags (sim/bench --worker-flags), to
// measure one setting against another.
var workerFlags []string

// workerProc is the worker process; done closes when it has exited.
type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Latency is one workflow or activity type's execution latency, seconds,
// from the Temporal SDK's summaries on the worker's /metrics (quantiles
// over the SDK's sliding window; Count is every execution).
type Latency struct {
	Type  string  `json:"type"`
	Count uint64  `json:"count"`
	P50   float64 `json:"p50Seconds"`
	P99   float64 `json:"p99Seconds"`
}

// latencies scrapes the worker's /metrics: activity execution latency by
// activity_type and workflow end-to-end latency by workflow_type.
func latencies(metricsAddr string) (activities, workflows []Latency, err error) {
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, nil, err
	}
	return fromSummary(fams, "temporal_activity_execution_latency", "activity_type"),
		fromSummary(fams, "temporal_workflow_endtoend_latency", "workflow_type"), nil
}

func fromSummary(fams map[string]*dto.MetricFamily, prefix, label string) []Latency {
	byType := map[string]*Latency{}
	for name, f := range fams {
		if !strings.HasPrefix(name, prefix) || f.GetType() != dto.MetricType_SUMMARY {
			continue
		}
		for _, m := range f.Metric {
			typ := ""
			for _, l := range m.Label {
				if l.GetName() == label {
					typ = l.GetValue()
				}
			}
			l := byType[typ]
			if l == nil {
				l = &Latency{Type: typ}
				byType[typ] = l
			}
			s := m.GetSummary()
			l.Count += s.GetSampleCount()
			for _, q := range s.Quantile {
				switch q.GetQuantile() {
				case 0.5:
					l.P50 = max(l.P50, q.GetValue())
				case 0.99:
					l.P99 = max(l.P99, q.GetValue())
				}
			}
		}
	}
	out := make([]Latency, 0, len(byType))
	for _, l := range byType {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}
