package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCheckStalePids(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)

	// a dead pid: removed and reported as stale
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	os.WriteFile(filepath.Join(run, "etcd.pid"), []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644)
	stale, err := checkStalePids(run, dir, Binaries)
	if err != nil || len(stale) != 1 || stale[0] != "etcd" || fileExists(filepath.Join(run, "etcd.pid")) {
		t.Fatalf("dead pid: stale=%v err=%v", stale, err)
	}

	// a live process whose command names the component: refused
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Skip("no sleep(1):", err)
	}
	defer live.Process.Kill()
	// Right after fork the child may still show the test binary's command line.
	for i := 0; i < 200 && !strings.Contains(processCommand(live.Process.Pid), "sleep"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	os.WriteFile(filepath.Join(run, "sleep.pid"), []byte(strconv.Itoa(live.Process.Pid)), 0o644)
	_, err = checkStalePids(run, dir, []string{"sleep"})
	if err == nil || !strings.Contains(err.Error(), "still running on "+dir) || !strings.Contains(err.Error(), "kill "+strconv.Itoa(live.Process.Pid)) {
		t.Fatalf("live pid: %v", err)
	}

	// a live pid reused by an unrelated program: treated as stale
	os.WriteFile(filepath.Join(run, "kwok.pid"), []byte(strconv.Itoa(live.Process.Pid)), 0o644)
	if stale, err := checkStalePids(run, dir, []string{"kwok"}); err != nil || len(stale) != 1 {
		t.Fatalf("reused pid: stale=%v err=%v", stale, err)
	}
}

func TestProcessFailureShowsLogTail(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess("sh", "/bin/sh", []string{"-c", "for i in $(seq 1 40); do echo line $i; done; exit 3"},
		filepath.Join(dir, "logs", "sh.log"), filepath.Join(dir, "run", "sh.pid"))
	if err != nil {
		t.Fatal(err)
	}
	never := func(context.Context) error { return os.ErrNotExist }
	err = waitReady(t.Context(), p, probe(never), 10*time.Second, 10*time.Millisecond)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "sh exited during startup (exit status 3)") || !strings.Contains(msg, "line 40") || strings.Contains(msg, "line 10\n") {
		t.Fatalf("error:\n%s", msg)
	}
	p.stop(time.Second)
	if fileExists(filepath.Join(dir, "run", "sh.pid")) {
		t.Error("pid file left after stop")
	}
}

func TestProcessStopEscalates(t *testing.T) {
	dir := t.TempDir()
	// ignores SIGTERM; must be SIGKILLed after the grace period
	p, err := startProcess("stubborn", "/bin/sh", []string{"-c", "trap '' TERM; echo started; sleep 30 & wait"},
		filepath.Join(dir, "logs", "s.log"), filepath.Join(dir, "run", "s.pid"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	p.stop(300 * time.Millisecond)
	if d := time.Since(t0); d < 300*time.Millisecond || d > 5*time.Second {
		t.Fatalf("stop took %v", d)
	}
	if pidAlive(p.pid()) {
		t.Fatal("still alive")
	}
}

func TestTailForErrorSkipsGoroutineDump(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "log %d\n", i)
	}
	b.WriteString("panic: failed to open database\n\ngoroutine 1 [running]:\n")
	for range 50 {
		b.WriteString("main.f()\n\t/x.go:1 +0x1\n")
	}
	f := filepath.Join(dir, "x.log")
	os.WriteFile(f, []byte(b.String()), 0o644)
	got := tailForError(f)
	if !strings.Contains(got, "log 29\npanic: failed to open database") || strings.Contains(got, "goroutine 1") || strings.Contains(got, "log 10\n") {
		t.Fatalf("tail:\n%s", got)
	}
}
