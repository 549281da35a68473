package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStatCPUSeconds(t *testing.T) {
	// proc(5): pid (comm) state ppid ... utime(14) stime(15) ...; the
	// command name may hold spaces and parentheses.
	line := "4242 (kube sched) x)) S 1 4242 4242 0 -1 4194560 5000 0 0 0 1234 566 0 0 20 0 12 0 100 0 0"
	if got := statCPUSeconds(line); got != 18.0 {
		t.Fatalf("statCPUSeconds = %v, want 18 (1234+566 ticks at 100 Hz)", got)
	}
	if got := statCPUSeconds("1 (short) S 1"); got != 0 {
		t.Fatalf("truncated line: %v, want 0", got)
	}
}

func TestPlannedUSDSumsThePlans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joinery.log")
	log := `{"level":"info","msg":"provisioning plan","pending":5,"usdPerHour":1.25}
{"level":"info","msg":"nodeclaim planned","usdPerHour":9}
not json, "provisioning plan"
{"level":"info","msg":"provisioning plan","pending":2,"usdPerHour":0.5}
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := plannedUSD(path); got != 1.75 {
		t.Fatalf("plannedUSD = %v, want 1.75 (the two plans, not the nodeclaim line)", got)
	}
	if got := plannedUSD(filepath.Join(t.TempDir(), "missing.log")); got != 0 {
		t.Fatalf("missing log: %v, want 0", got)
	}
}
