package controller

import (
	"net/http"
	"testing"

	"github.com/joinery/joinery/internal/metrics"
	"go.uber.org/zap"
)

// /debug/pprof/ is served only with profiling on; /metrics and the probes
// either way.
func TestMetricsServerProfilingOnlyWhenAsked(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		srv, err := serveMetrics("127.0.0.1:0", profiling, metrics.New(), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		status := func(path string) int {
			resp, err := http.Get("http://" + srv.Addr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		want := map[string]int{"/metrics": 200, "/readyz": 200, "/debug/pprof/": 404, "/debug/pprof/goroutine?debug=1": 404}
		if profiling {
			want["/debug/pprof/"], want["/debug/pprof/goroutine?debug=1"] = 200, 200
		}
		for path, code := range want {
			if got := status(path); got != code {
				t.Errorf("profiling %v: GET %s = %d, want %d", profiling, path, got, code)
			}
		}
		_ = srv.Close()
	}
}
