package world

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDecodeSimulationDuration(t *testing.T) {
	set := func(r *NodeFaultRequest, d time.Duration) { r.Grace = d }
	cases := []struct {
		body, wantErr string
		want          NodeFaultRequest
	}{
		{body: `{"node":"n1","kind":"kubelet-stopped","grace":"40s"}`, want: NodeFaultRequest{Node: "n1", Kind: FaultKubeletStopped, Grace: 40 * time.Second}},
		{body: `{"node":"n1"}`, want: NodeFaultRequest{Node: "n1"}},
		{body: `{"node":"n1","grace":"soon"}`, wantErr: "bad grace"},
		{body: `{"node":"n1","grace":40}`, wantErr: "Go duration string"},
		{body: `{"node":`, wantErr: "bad request"},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
		got, err := decodeSimulation(r, "grace", set)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.body, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.body, got, err, c.want)
		}
	}
}
