package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/record"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func deployment(replicas int64) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u-web", "creationTimestamp": "2026-12-01T00:00:00Z"},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}}}}},
	}
}

func nodeObj(name, typ, capacityType string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "labels": map[string]any{
		"node.kubernetes.io/instance-type": typ, "karpenter.sh/capacity-type": capacityType}}}
}

func recording() *record.Recording {
	ownedPod := map[string]any{"metadata": map[string]any{"name": "web-1", "namespace": "shop",
		"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "name": "web-x", "controller": true}}}}
	barePod := map[string]any{"metadata": map[string]any{"name": "debug", "namespace": "shop"},
		"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c"}}}}
	sysPod := map[string]any{"metadata": map[string]any{"name": "coredns", "namespace": "kube-system"}}
	return &record.Recording{Version: record.Version, Start: t0, End: t0.Add(10 * time.Minute),
		Objects: []record.Object{
			{Kind: "Deployment", Object: deployment(3)}, {Kind: "Pod", Object: ownedPod}, {Kind: "Pod", Object: sysPod},
			{Kind: "Node", Object: nodeObj("n1", "m5.large", "on-demand")},
		},
		Events: []record.Event{
			{At: t0.Add(time.Minute), Type: "ADDED", Kind: "Pod", Object: barePod},
			{At: t0.Add(2 * time.Minute), Type: "MODIFIED", Kind: "Deployment", Object: deployment(10)},
			{At: t0.Add(3 * time.Minute), Type: "ADDED", Kind: "Node", Object: nodeObj("n2", "c5.xlarge", "spot")},
			{At: t0.Add(4 * time.Minute), Type: "MODIFIED", Kind: "Pod", Object: barePod},
			{At: t0.Add(5 * time.Minute), Type: "DELETED", Kind: "Pod", Object: barePod},
			{At: t0.Add(6 * time.Minute), Type: "DELETED", Kind: "Node", Object: nodeObj("n1", "m5.large", "on-demand")},
		}}
}

// The timeline recreates the workload a replaying cluster cannot make on
// its own: the Deployment (not its pods), the bare pod with the replay's
// image and no node, its deletion; nothing of kube-system.
func TestTimeline(t *testing.T) {
	steps := Timeline(recording())
	var got []string
	for _, s := range steps {
		got = append(got, s.At.String()+" "+map[bool]string{true: "delete", false: "apply"}[s.Delete]+" "+s.Object.GetKind()+" "+s.Object.GetName())
	}
	want := "0s apply Deployment web|1m0s apply Pod debug|2m0s apply Deployment web|5m0s delete Pod debug"
	if strings.Join(got, "|") != want {
		t.Fatalf("steps\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	pod := steps[1].Object
	if _, has := pod.Object["spec"].(map[string]any)["nodeName"]; has || !strings.Contains(string(must(pod.MarshalJSON())), Image) {
		t.Errorf("bare pod %v: want no nodeName and the replay's image", pod.Object)
	}
	if r, _ := steps[2].Object.Object["spec"].(map[string]any)["replicas"].(int64); r != 10 || steps[0].Object.GetUID() != "" {
		t.Errorf("the scaled Deployment: replicas %v, uid %q", r, steps[0].Object.GetUID())
	}
	if ns := Namespaces(steps); len(ns) != 1 || ns[0] != "shop" {
		t.Errorf("namespaces %v", ns)
	}
}

// The recorded capacity follows the nodes' lives, priced by their labels.
func TestRecordedCapacity(t *testing.T) {
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.large")
	c5, _ := cat.Get("c5.xlarge")
	rc := RecordedCapacity(recording(), cat)
	for _, tc := range []struct {
		at    time.Duration
		nodes int
		usd   float64
	}{{0, 1, m5.OnDemandPrice}, {3 * time.Minute, 2, m5.OnDemandPrice + c5.SpotPrice()}, {7 * time.Minute, 1, c5.SpotPrice()}} {
		c := rc.At(tc.at)
		if c.Nodes != tc.nodes || c.USDPerHour-tc.usd > 1e-9 || tc.usd-c.USDPerHour > 1e-9 {
			t.Errorf("at %s: %+v, want %d nodes at %.4f", tc.at, c, tc.nodes, tc.usd)
		}
	}
}

// Rows average each side over a bucket and add up pending-pod seconds;
// the chart is drawn from the same samples.
func TestRowsAndChart(t *testing.T) {
	var samples []Sample
	for i := 0; i < 4; i++ {
		samples = append(samples, Sample{At: time.Duration(i) * 30 * time.Second,
			Recorded: Capacity{Nodes: 2, USDPerHour: 0.2}, Replayed: Capacity{Nodes: i, USDPerHour: 0.1 * float64(i)}, Pending: 4 - i,
			Evicted: i, RecordedEvicted: 1, Interrupted: i % 2})
	}
	rows := Rows(samples, 30*time.Second, time.Minute)
	if len(rows) != 2 || rows[0].ReplayedNodes != 0.5 || rows[1].ReplayedUSD < 0.2499 || rows[1].ReplayedUSD > 0.2501 ||
		rows[0].PendingPodSeconds != 210 || rows[1].RecordedNodes != 2 || rows[1].Evicted != 5 || rows[0].RecordedEvicted != 2 ||
		rows[1].Interruptions != 1 || rows[0].RecordedInterruptions != 0 {
		t.Fatalf("rows %+v", rows)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, rows); err != nil || !strings.Contains(buf.String(), "1m0s-2m0s") || !strings.Contains(buf.String(), "evicted pods (replayed)") {
		t.Errorf("table %q, %v", buf.String(), err)
	}
	for _, name := range []string{"chart.svg", "chart.png"} {
		path := filepath.Join(t.TempDir(), name)
		if err := WriteChart(path, samples); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if len(b) < 1000 || (name == "chart.svg" && !strings.Contains(string(b), "recorded")) {
			t.Errorf("%s: %d bytes", name, len(b))
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// The warm-up waits for the replicas the recording started with, whether
// the count came from YAML or from a recording's JSON.
func TestExpectedPods(t *testing.T) {
	d := deployment(3)
	d["spec"].(map[string]any)["replicas"] = float64(3) // as JSON decodes it
	r := &record.Recording{Version: record.Version, Start: t0, End: t0.Add(time.Minute), Objects: []record.Object{
		{Kind: "Deployment", Object: d},
		{Kind: "Pod", Object: map[string]any{"metadata": map[string]any{"name": "bare", "namespace": "shop"}}},
	}}
	if got := expectedPods(Timeline(r)); got != 4 {
		t.Errorf("expected pods %d, want 4", got)
	}
}

// A node registers before the cloud node manager labels its type: its
// price comes from the labels it gets later. The cluster's own
// PriorityClasses (above the user limit) are not replayed.
func TestRecordedNodePricedOnceLabelled(t *testing.T) {
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.large")
	bare := map[string]any{"metadata": map[string]any{"name": "n9", "labels": map[string]any{}}}
	r := &record.Recording{Version: record.Version, Start: t0, End: t0.Add(time.Minute), Events: []record.Event{
		{At: t0.Add(time.Second), Type: "ADDED", Kind: "Node", Object: bare},
		{At: t0.Add(2 * time.Second), Type: "MODIFIED", Kind: "Node", Object: nodeObj("n9", "m5.large", "on-demand")},
	}, Objects: []record.Object{
		{Kind: "PriorityClass", Object: map[string]any{"metadata": map[string]any{"name": "system-node-critical"}, "value": float64(2000001000)}},
		{Kind: "PriorityClass", Object: map[string]any{"metadata": map[string]any{"name": "batch-low"}, "value": float64(-10)}},
	}}
	if c := RecordedCapacity(r, cat).At(30 * time.Second); c.Nodes != 1 || c.USDPerHour != m5.OnDemandPrice {
		t.Errorf("capacity %+v, want one m5.large at %.4f", c, m5.OnDemandPrice)
	}
	steps := Timeline(r)
	if len(steps) != 1 || steps[0].Object.GetName() != "batch-low" {
		t.Errorf("steps %v, want only the user's PriorityClass", steps)
	}
}
