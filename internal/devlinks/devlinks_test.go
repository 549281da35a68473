package devlinks

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The link names each main graph's expression on the view asked for.
func TestPrometheusGraphs(t *testing.T) {
	u, err := url.Parse(PrometheusGraphs("127.0.0.1:9090", Table))
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "127.0.0.1:9090" || u.Path != "/graph" {
		t.Errorf("link %s, want the graph page of 127.0.0.1:9090", u)
	}
	for i, expr := range Graphs {
		if got := u.Query().Get(fmt.Sprintf("g%d.expr", i)); got != expr {
			t.Errorf("g%d.expr = %q, want %q", i, got, expr)
		}
		if got := u.Query().Get(fmt.Sprintf("g%d.tab", i)); got != "1" {
			t.Errorf("g%d.tab = %q, want 1 (the table)", i, got)
		}
	}
	if strings.Contains(u.RawQuery, "+") {
		t.Error("spaces encoded as '+', which Prometheus' UI reads literally")
	}
}

// The workflow list carries the NodePool query, decoded as written.
func TestTemporalWorkflows(t *testing.T) {
	got := TemporalWorkflows("http://127.0.0.1:8233", "default", NodePoolQuery("general-purpose"))
	want := "http://127.0.0.1:8233/namespaces/default/workflows?query=NodePool%20%3D%20%22general-purpose%22"
	if got != want {
		t.Errorf("link %s, want %s", got, want)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if q := u.Query().Get("query"); q != `NodePool = "general-purpose"` {
		t.Errorf("query %q", q)
	}
	if got := TemporalWorkflows("http://127.0.0.1:8233", "default", ""); got != "http://127.0.0.1:8233/namespaces/default/workflows" {
		t.Errorf("unfiltered link %s", got)
	}
}
