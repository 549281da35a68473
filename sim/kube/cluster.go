package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Cluster is a running local control plane. Its processes keep running after
// the Start context ends; call Stop to end them (they are also killed by the
// kernel if this process dies, on Linux).
type Cluster struct {
	opts       Options
	binDir     string
	pki        *pki
	server     string
	kubeconfig string

	mu       sync.Mutex
	procs    []*process // in start order
	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd, kube-apiserver, kube-scheduler, kube-controller-manager
// and kwok on loopback ports and returns once every one is ready (etcd
// /health, apiserver /readyz and the default namespace, the others /healthz).
// It resumes the cluster found in opts.StateDir, if any.
//
// Before starting it fails fast, with a one-line error saying what to do, when
// a control plane from an earlier start is still running on the state
// directory or one of the ports is in use. If a component does not become
// ready within opts.ReadyTimeout, Start stops what it started and returns an
// error with the last lines of that component's log. ctx bounds only the
// start (including a first-time build of the binaries), not the cluster's life.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if err := platformCheck(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, format+"\n", args...) }
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	runDir := filepath.Join(o.StateDir, "run")
	stale, err := checkStalePids(runDir, o.StateDir, Binaries)
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		logf("the previous run on %s did not stop cleanly (left-over pid files: %s)", o.StateDir, strings.Join(stale, ", "))
	}
	if o.Fresh {
		if err := wipeStateDir(o.StateDir); err != nil {
			return nil, err
		}
		logf("removed the previous cluster in %s (fresh start)", o.StateDir)
	}
	if err := checkPorts(o.Ports); err != nil {
		return nil, err
	}

	binDir, err := resolveBinDir(ctx, o.BinDir, o.Progress)
	if err != nil {
		return nil, err
	}
	if err := checkPorts(o.Ports); err != nil { // again: a first build takes minutes
		return nil, err
	}

	p, reason, err := ensurePKI(filepath.Join(o.StateDir, "pki"), time.Now())
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	if reason != "" {
		logf("regenerated the PKI in %s (%s)", p.dir, reason)
	}
	c := &Cluster{
		opts:       o,
		binDir:     binDir,
		pki:        p,
		server:     fmt.Sprintf("https://127.0.0.1:%d", o.Ports.APIServer),
		kubeconfig: filepath.Join(o.StateDir, kubeconfigFile),
	}
	if err := writeFileAtomic(c.kubeconfig, kubeconfigYAML(c.server, p), 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(o.StateDir, kwokStagesFile), kwokStages, 0o644); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()

	// etcd
	etcdData := filepath.Join(o.StateDir, "etcd")
	resumed := fileExists(filepath.Join(etcdData, "member"))
	if err := c.startAndWait(ctx, c.etcd(etcdData)); err != nil {
		if resumed {
			return nil, fmt.Errorf("etcd could not start from its data in %s, which may be corrupt or unusable: remove %s or run with --fresh (Options.Fresh): %w", etcdData, o.StateDir, err)
		}
		return nil, err
	}
	// kube-apiserver
	if err := c.startAndWait(ctx, c.apiserver()); err != nil {
		return nil, err
	}
	// the rest, concurrently
	others := []component{c.scheduler(), c.controllerManager(), c.kwok()}
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i, comp := range others {
		wg.Go(func() { errs[i] = c.startAndWait(ctx, comp) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	state := "new cluster"
	if resumed {
		state = "resumed cluster"
	}
	logf("control plane ready in %.2fs (%s, %s): KUBECONFIG=%s", time.Since(t0).Seconds(), state, o.StateDir, c.kubeconfig)
	return c, nil
}

// Kubeconfig returns the path of the admin kubeconfig in the state directory
// (self-contained, cluster-admin), e.g. for KUBECONFIG=... kubectl.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a new admin *rest.Config for the cluster (QPS 200, Burst 400).
func (c *Cluster) RESTConfig() *rest.Config { return restConfigFor(c.server, c.pki) }

// Server returns the kube-apiserver URL, https://127.0.0.1:<port>.
func (c *Cluster) Server() string { return c.server }

// SchedulerURL returns the kube-scheduler's secure endpoint,
// https://127.0.0.1:<port> (self-signed; /metrics and /debug/pprof need
// no credentials).
func (c *Cluster) SchedulerURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.opts.Ports.Scheduler)
}

// BinDir returns the folder the control-plane binaries were run from.
func (c *Cluster) BinDir() string { return c.binDir }

// Stop ends the control plane: SIGTERM to kwok, the controller-manager and the
// scheduler, then the apiserver, then etcd, each given 5 s before SIGKILL. etcd
// data stays in the state directory for the next Start. It is safe to call more
// than once; it returns an error naming any component that had exited on its
// own before Stop (its log says why).
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		procs := append([]*process(nil), c.procs...)
		c.mu.Unlock()
		var crashed []error
		for _, p := range procs {
			if p.exited() {
				crashed = append(crashed, fmt.Errorf("%s had exited before Stop (%v): see %s", p.name, p.exitErr, p.logPath))
			}
		}
		tiers := [][]string{{"kwok", "kube-controller-manager", "kube-scheduler"}, {"kube-apiserver"}, {"etcd"}}
		for _, tier := range tiers {
			var wg sync.WaitGroup
			for _, p := range procs {
				for _, name := range tier {
					if p.name == name {
						wg.Go(func() { p.stop(stopGrace) })
					}
				}
			}
			wg.Wait()
		}
		c.stopErr = errors.Join(crashed...)
		fmt.Fprintf(c.opts.Log, "control plane stopped (%s)\n", c.opts.StateDir)
	})
	return c.stopErr
}

// startAndWait starts one component and waits for it to be ready.
func (c *Cluster) startAndWait(ctx context.Context, comp component) error {
	t := time.Now()
	p, err := startProcess(comp.name, filepath.Join(c.binDir, comp.name), comp.args,
		filepath.Join(c.opts.StateDir, "logs", comp.name+".log"), filepath.Join(c.opts.StateDir, "run", comp.name+".pid"))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	if err := waitReady(ctx, p, comp.ready, c.opts.ReadyTimeout, comp.interval); err != nil {
		return err
	}
	fmt.Fprintf(c.opts.Log, "%s ready in %.2fs (pid %d, port %d)\n", comp.name, time.Since(t).Seconds(), p.pid(), comp.port)
	return nil
}

// wipeStateDir empties dir for a fresh start, refusing a directory that does
// not look like a state directory (so a mistyped path is never erased).
func wipeStateDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if !fileExists(filepath.Join(dir, "pki")) && !fileExists(filepath.Join(dir, "etcd")) && !fileExists(filepath.Join(dir, kubeconfigFile)) {
		return fmt.Errorf("refusing to wipe %s for a fresh start: it does not look like a sim/kube state directory (no pki/, etcd/ or %s)", dir, kubeconfigFile)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
