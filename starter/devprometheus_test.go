package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/internal/devlinks"
	"github.com/joinery/joinery/internal/promtest"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// starter dev --prometheus runs Debian's prometheus and it scrapes the
// controller's metrics: a metric the target serves can be queried.
func TestDevPrometheusScrapes(t *testing.T) {
	promtest.Binary(t, "prometheus", "run starter dev's Prometheus")
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "# TYPE karpenter_nodepools_cost_total gauge\nkarpenter_nodepools_cost_total{nodepool=\"general-purpose\"} 0.8531")
	}))
	defer target.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := startDevPrometheus(ctx, t.TempDir(), addr, strings.TrimPrefix(target.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	c, err := api.NewClient(api.Config{Address: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		v, _, err := promv1.NewAPI(c).Query(ctx, devlinks.Graphs[0], time.Now())
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == 1 && float64(vec[0].Value) == 0.8531 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v, %v", devlinks.Graphs[0], v, err)
		}
		time.Sleep(time.Second)
	}
}
