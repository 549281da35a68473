// Package promtest finds Prometheus' binaries (Debian's prometheus
// package; hack/prometheus.sh installs it) for the tests that run them.
package promtest

import (
	"os"
	"os/exec"
	"testing"
)

// Binary is the path of name (prometheus or promtool). Without it the test
// is skipped, saying what it would have done, unless
// JOINERY_TEST_PROMETHEUS is set (CI sets it), when it fails.
func Binary(t testing.TB, name, purpose string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("JOINERY_TEST_PROMETHEUS") != "" {
		t.Fatalf("JOINERY_TEST_PROMETHEUS is set but %s is not on PATH: %v", name, err)
	}
	t.Skipf("%s is not installed: apt-get install prometheus (or hack/prometheus.sh install) to %s", name, purpose)
	return ""
}
