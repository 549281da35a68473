package main

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/sim/world"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDevBootPhasesFromFlags(t *testing.T) {
	f := &devFlags{bootDelay: 5 * time.Second, bootRegister: 30 * time.Second, bootNetwork: 0}
	if got, want := f.boot(), (world.BootPhases{Pending: 5 * time.Second, Register: 30 * time.Second, NetworkReady: -1}); got != want {
		t.Errorf("boot() = %+v, want %+v (0 is no wait)", got, want)
	}
	f.fastBoot = true
	if got, want := f.boot(), (world.BootPhases{Pending: time.Second, Register: time.Second, NetworkReady: time.Second}); got != want {
		t.Errorf("--fast-boot: boot() = %+v, want %+v", got, want)
	}
}

func TestBootSummary(t *testing.T) {
	if s := bootSummary(nil); s != "" {
		t.Errorf("no nodes: %q", s)
	}
	got := bootSummary([]time.Duration{41 * time.Second, 43210 * time.Millisecond, 50 * time.Second})
	if want := "Node boot time, launch to Ready: 3 node(s), median 43.2s, min 41s, max 50s"; got != want {
		t.Errorf("bootSummary = %q, want %q", got, want)
	}
}

// The Web UI link is filtered by the manifests' first NodePool.
func TestWebUILine(t *testing.T) {
	pool := &unstructured.Unstructured{}
	pool.SetKind("NodePool")
	pool.SetName("memory-optimized")
	dep := &unstructured.Unstructured{}
	dep.SetKind("Deployment")
	dep.SetName("inflate")
	got := webUILine("http://127.0.0.1:8233", []*unstructured.Unstructured{dep, pool})
	want := "Temporal Web UI: http://127.0.0.1:8233/namespaces/default/workflows?query=NodePool%20%3D%20%22memory-optimized%22 " +
		"(the workflows of NodePool memory-optimized's nodes, one nodeclaim/... per node; clear the query for all)"
	if got != want {
		t.Errorf("webUILine = %q, want %q", got, want)
	}
	if got := webUILine("http://127.0.0.1:8233", []*unstructured.Unstructured{dep}); !strings.HasPrefix(got, "Temporal Web UI: http://127.0.0.1:8233/namespaces/default/workflows (") {
		t.Errorf("no NodePool: %q", got)
	}
}
