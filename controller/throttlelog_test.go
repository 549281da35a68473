package controller

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Every throttled attempt is counted; the log says so once per 30 s per
// service and action, with how many attempts came meanwhile.
func TestThrottleReporterCountsAllLogsSome(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	counted := map[string]int{}
	r := newThrottleReporter(func(s, a string) { counted[s+" "+a]++ }, zap.New(core))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	for range 100 {
		r.throttled("EC2", "DescribeInstances")
	}
	r.throttled("EC2", "TerminateInstances")
	now = now.Add(throttleLogEvery)
	r.throttled("EC2", "DescribeInstances")
	if counted["EC2 DescribeInstances"] != 101 || counted["EC2 TerminateInstances"] != 1 {
		t.Fatalf("counted %v", counted)
	}
	var lines []string
	for _, e := range logs.All() {
		lines = append(lines, e.ContextMap()["action"].(string))
	}
	if len(lines) != 3 || lines[0] != "DescribeInstances" || lines[1] != "TerminateInstances" || lines[2] != "DescribeInstances" {
		t.Fatalf("logged %v, want DescribeInstances, TerminateInstances, DescribeInstances", lines)
	}
	if n := logs.All()[2].ContextMap()["attempts"]; n != int64(100) {
		t.Errorf("second DescribeInstances line says %v attempts, want the 99 unlogged + this one", n)
	}
}
