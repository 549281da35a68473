package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/joinery/joinery/internal/devlinks"
)

// devPrometheus is a Prometheus server (Debian's prometheus package, on
// PATH) that scrapes the controller's /metrics for starter dev.
type devPrometheus struct {
	cmd  *exec.Cmd
	Addr string
}

// startDevPrometheus runs prometheus with its data in dir, scraping
// target every 5 s as job "joinery" (the alerts' job), listening on addr.
func startDevPrometheus(ctx context.Context, dir, addr, target string) (*devPrometheus, error) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		return nil, fmt.Errorf("--prometheus: no prometheus on PATH (apt-get install prometheus, or hack/prometheus.sh install): %w", err)
	}
	if target == "" {
		return nil, fmt.Errorf("--prometheus needs the controller's --metrics-addr")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf("global: {scrape_interval: 5s, evaluation_interval: 5s}\nscrape_configs:\n  - job_name: joinery\n    static_configs: [{targets: [%q]}]\n", target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { _ = cmd.Wait(); logf.Close() }()
	return &devPrometheus{cmd: cmd, Addr: addr}, nil
}

// Stop ends the server.
func (p *devPrometheus) Stop() {
	if p != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// GraphURL is the Prometheus UI with the dashboard's main graphs
// prepared, over the last hour.
func (p *devPrometheus) GraphURL() string { return devlinks.PrometheusGraphs(p.Addr, devlinks.Graph) }
