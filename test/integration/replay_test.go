//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/preview/record"
	replayer "github.com/joinery/joinery/preview/replay"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/starter/migrate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// replayFixture is an anonymized 6 min 40 s recording of the local world
// from empty (TestWriteReplayFixture): inflate 10 -> 40 -> 20 -> 60 -> 10
// with consolidation, and a spot interruption.
const replayFixture = "testdata/recording-inflate.json.gz"

// The fixture replayed ten times faster on the same NodePool: Joinery's
// nodes cost within 10% of the recorded cluster's over the recording (the
// same controller, so what differs is timing); the chart is drawn from
// the samples the report is made of.
func TestReplayTracksTheRecording(t *testing.T) {
	parallel(t)
	rec := readFixture(t)
	e := startEnvWith(t, true)
	e.apply(t, replayer.Pools(rec))
	const interval = 10 * time.Second
	samples := runReplay(t, e, rec, 10, interval)
	rows := replayer.Rows(samples, interval, rec.End.Sub(rec.Start)+interval)
	logRows(t, replayer.Rows(samples, interval, time.Minute))
	whole := rows[0]
	t.Logf("whole recording: recorded %.4f USD/h on %.1f nodes, replayed %.4f on %.1f", whole.RecordedUSD, whole.RecordedNodes, whole.ReplayedUSD, whole.ReplayedNodes)
	if d := (whole.ReplayedUSD - whole.RecordedUSD) / whole.RecordedUSD; d > 0.10 || d < -0.10 {
		t.Errorf("replayed USD/h %.4f is %+.1f%% from the recorded %.4f", whole.ReplayedUSD, 100*d, whole.RecordedUSD)
	}
	if want := int(rec.End.Sub(rec.Start)/interval) + 1; len(samples) != want {
		t.Errorf("%d samples over %s, want %d", len(samples), rec.End.Sub(rec.Start), want)
	}
	// The recording's consolidation deleted 29 pods on nodes tainted
	// karpenter.sh/disrupted; its spot interruption, drained within the
	// notice, left no sign on the Node. (The replay's consolidation, on
	// wall-clock timers, comes after the 40 s the replay lasts: its
	// evictions are TestReplayRebalanceOnly's.)
	if whole.RecordedEvicted != 29 || whole.RecordedInterruptions != 0 {
		t.Errorf("recorded: %d evicted pods (want 29), %d spot interruptions (want 0)", whole.RecordedEvicted, whole.RecordedInterruptions)
	}
	chart := filepath.Join(t.TempDir(), "replay.svg")
	if err := replayer.WriteChart(chart, samples); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(chart); err != nil || st.Size() < 5000 {
		t.Errorf("chart %s: %v", chart, err)
	}
}

// A Cluster Autoscaler cluster (a recording built here: one managed node
// group of six m5.2xlarge for 12 pods of 500m, scaled to 20 after a
// minute, the new pods waiting 90 s for the group to grow) replayed on
// starter migrate's NodePools: Joinery's nodes cost less, and its pods
// wait no longer than the recorded ones.
func TestReplayOfAClusterAutoscalerCluster(t *testing.T) {
	parallel(t)
	rec, nodes := casRecording()
	e := startEnvWith(t, true)
	e.apply(t, casPools(nodes, ""))
	const interval = 5 * time.Second
	samples := runReplay(t, e, rec, 2, interval)
	row := replayer.Rows(samples, interval, rec.End.Sub(rec.Start)+interval)[0]
	logRows(t, []replayer.Row{row})
	if row.ReplayedUSD >= row.RecordedUSD {
		t.Errorf("replayed %.4f USD/h, not below the node group's %.4f", row.ReplayedUSD, row.RecordedUSD)
	}
	if row.PendingPodSeconds > row.RecordedPendingPodSeconds {
		t.Errorf("pods waited %.0f s on Joinery, %.0f s on Cluster Autoscaler", row.PendingPodSeconds, row.RecordedPendingPodSeconds)
	}
}

// The Cluster Autoscaler recording replayed --rebalance-only: Joinery
// provisions nothing, the node group's six m5.2xlarge and its seventh are
// bought again when the recording got them, and consolidation (after 5 s
// here, not migrate's 10 minutes: the replay lasts 90 s) packs the pods on
// fewer nodes, evicting them, for less than the node group cost.
func TestReplayRebalanceOnly(t *testing.T) {
	parallel(t)
	rec, nodes := casRecording()
	e := startEnvWith(t, true, func(c *controller.Config) { c.DisableProvisioning = true })
	e.apply(t, casPools(nodes, "5s"))
	var batches [][]string
	recreate := &replayer.Recreator{Temporal: e.tc, Dynamic: dynamicClient(t, e), Log: testWriter{t}, NodeClaims: func(names []string) { batches = append(batches, names) }}
	const interval = 5 * time.Second
	samples := runReplayWith(t, e, rec, 2, interval, recreate.Recreate)
	row := replayer.Rows(samples, interval, rec.End.Sub(rec.Start)+interval)[0]
	logRows(t, []replayer.Row{row})
	if len(batches) != 2 || len(batches[0]) != 6 || len(batches[1]) != 1 {
		t.Errorf("recreated NodeClaims %v, want 6 then 1", batches)
	}
	for _, b := range batches {
		for _, name := range b {
			if typ := nodeClaimType(t, e, name); typ != "" && typ != "m5.2xlarge" {
				t.Errorf("NodeClaim %s is a %s, want the recorded m5.2xlarge", name, typ)
			}
		}
	}
	if row.ReplayedUSD >= row.RecordedUSD || row.Evicted == 0 || row.RecordedEvicted != 0 {
		t.Errorf("replayed %.4f USD/h against %.4f recorded, %d pods evicted (want fewer USD, some evictions; recorded evictions %d, want 0)",
			row.ReplayedUSD, row.RecordedUSD, row.Evicted, row.RecordedEvicted)
	}
}

// nodeClaimType is the NodeClaim's instance type label ("" once deleted,
// or before launch).
func nodeClaimType(t *testing.T, e *env, name string) string {
	t.Helper()
	u, err := dynamicClient(t, e).Resource(apiv1.NodeClaimGVR).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return u.GetLabels()[apiv1.LabelInstanceType]
}

// The fixture with a spot interruption it can show (a spot node gone
// unreachable at 2m30s, added here: the fixture's own interruption was
// drained within the notice and left no sign): the replay interrupts one
// of its spot nodes through the local interruption queue, Joinery drains
// it, and its SpotInterrupted Event is counted beside the recorded one.
func TestReplayInflictsARecordedSpotInterruption(t *testing.T) {
	parallel(t)
	rec := readFixture(t)
	const at = 150 * time.Second
	victim := recordedNodeAt(t, rec, at)
	_ = unstructured.SetNestedSlice(victim, []any{map[string]any{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}}, "spec", "taints")
	rec.Events = append(rec.Events, record.Event{At: rec.Start.Add(at), Type: "MODIFIED", Kind: "Node", Object: victim})
	sort.SliceStable(rec.Events, func(i, j int) bool { return rec.Events[i].At.Before(rec.Events[j].At) })
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
	})
	e.apply(t, replayer.Pools(rec))
	kc, err := kubernetes.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	const interval = 10 * time.Second
	r := replayer.Runner{Kube: kc, Dynamic: dynamicClient(t, e), Catalog: catalog.MustDefault(), Speed: 10, Interval: interval,
		Warmup: 3 * time.Minute, Log: testWriter{t}, Interrupt: replayer.SpotInterrupter{Kube: kc, Simulate: func(ctx context.Context, node string) error {
			_, err := e.w.SimulateInterruption(ctx, world.SimulateRequest{Node: node, Kind: world.SimSpot})
			return err
		}}.Interrupt}
	samples, err := r.Run(e.ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	whole := replayer.Rows(samples, interval, rec.End.Sub(rec.Start)+interval)[0]
	logRows(t, []replayer.Row{whole})
	if whole.RecordedInterruptions != 1 || whole.Interruptions != 1 {
		t.Errorf("spot interruptions: recorded %d, replayed %d; want 1 and 1", whole.RecordedInterruptions, whole.Interruptions)
	}
}

// recordedNodeAt is the last recorded state of a node the recording had
// at a moment (added before it, deleted after it or never).
func recordedNodeAt(t *testing.T, rec *record.Recording, at time.Duration) map[string]any {
	t.Helper()
	last, gone := map[string]map[string]any{}, map[string]bool{}
	var names []string
	for _, ev := range rec.Events {
		if ev.Kind != "Node" || ev.At.Sub(rec.Start) > at {
			continue
		}
		name, _, _ := unstructured.NestedString(ev.Object, "metadata", "name")
		if _, seen := last[name]; !seen {
			names = append(names, name)
		}
		last[name], gone[name] = ev.Object, ev.Type == "DELETED"
	}
	for _, n := range names {
		if !gone[n] {
			return runtime.DeepCopyJSON(last[n])
		}
	}
	t.Fatalf("no recorded node at %s", at)
	return nil
}

func readFixture(t *testing.T) *record.Recording {
	t.Helper()
	rec, err := record.ReadFile(replayFixture)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// casPools are starter migrate's NodePools and EC2NodeClasses for the
// node group's nodes, on the local world's role, with consolidateAfter
// set when not "".
func casPools(nodes []*corev1.Node, consolidateAfter string) []*unstructured.Unstructured {
	groups, _ := migrate.NodeGroups(nodes, nil)
	prop := migrate.Propose(groups, "production-eks")
	var pools []*unstructured.Unstructured
	for _, o := range prop.Objects {
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}
		switch {
		case u.GetKind() == "EC2NodeClass":
			_ = unstructured.SetNestedField(u.Object, "KarpenterNodeRole-production", "spec", "role") // the local world's role
		case consolidateAfter != "":
			_ = unstructured.SetNestedField(u.Object, consolidateAfter, "spec", "disruption", "consolidateAfter")
		}
		pools = append(pools, u)
	}
	return pools
}

func runReplay(t *testing.T, e *env, rec *record.Recording, speed float64, interval time.Duration) []replayer.Sample {
	t.Helper()
	return runReplayWith(t, e, rec, speed, interval, nil)
}

func runReplayWith(t *testing.T, e *env, rec *record.Recording, speed float64, interval time.Duration,
	recreate func(context.Context, []replayer.RecordedNode) error) []replayer.Sample {
	t.Helper()
	kc, err := kubernetes.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := replayer.Runner{Kube: kc, Dynamic: dynamicClient(t, e), Catalog: catalog.MustDefault(), Speed: speed, Interval: interval,
		Warmup: 3 * time.Minute, Log: testWriter{t}, Recreate: recreate}
	samples, err := r.Run(e.ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	return samples
}

func logRows(t *testing.T, rows []replayer.Row) {
	for _, r := range rows {
		t.Logf("%s-%s: nodes %.1f / %.1f, USD/h %.4f / %.4f, pending pod-s %.0f / %.0f, evicted pods %d / %d, spot interruptions %d / %d (recorded / replayed)",
			r.From, r.To, r.RecordedNodes, r.ReplayedNodes, r.RecordedUSD, r.ReplayedUSD, r.RecordedPendingPodSeconds, r.PendingPodSeconds,
			r.RecordedEvicted, r.Evicted, r.RecordedInterruptions, r.Interruptions)
	}
}

// casRecording is a 3-minute recording of a Cluster Autoscaler cluster
// and its nodes as starter migrate reads them.
func casRecording() (*record.Recording, []*corev1.Node) {
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	rec := &record.Recording{Version: record.Version, Start: start, End: start.Add(3 * time.Minute)}
	var nodes []*corev1.Node
	for i := 0; i < 6; i++ {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-1-0-" + string(rune('a'+i)) + ".ec2.internal", Labels: map[string]string{
			"eks.amazonaws.com/nodegroup": "general", "eks.amazonaws.com/capacityType": "ON_DEMAND", apiv1.LabelArch: "amd64",
			apiv1.LabelInstanceType: "m5.2xlarge", apiv1.LabelZone: "us-east-1" + string(rune('a'+i%3)), apiv1.LabelOS: "linux"}},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "Amazon Linux 2023.6.20250115", Architecture: "amd64"},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m")}}}
		nodes = append(nodes, n)
		obj, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
		rec.Objects = append(rec.Objects, record.Object{Kind: "Node", Object: obj})
	}
	dep := func(replicas int64) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "api", "namespace": "shop", "uid": "u-api"},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "api"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "api"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "api", "resources": map[string]any{
						"requests": map[string]any{"cpu": "500m", "memory": "512Mi"}}}}}}}}
	}
	pod := func(i int, node string) map[string]any {
		p := map[string]any{"metadata": map[string]any{"name": "api-" + string(rune('a'+i)), "namespace": "shop", "uid": "u-api-" + string(rune('a'+i)),
			"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "name": "api-1", "uid": "u-rs", "controller": true}}},
			"spec": map[string]any{}, "status": map[string]any{"phase": "Pending"}}
		if node != "" {
			p["spec"].(map[string]any)["nodeName"] = node
			p["status"].(map[string]any)["phase"] = "Running"
		}
		return p
	}
	rec.Objects = append(rec.Objects, record.Object{Kind: "Deployment", Object: dep(12)})
	for i := 0; i < 12; i++ {
		rec.Objects = append(rec.Objects, record.Object{Kind: "Pod", Object: pod(i, nodes[i%6].Name)})
	}
	rec.Events = append(rec.Events, record.Event{At: start.Add(time.Minute), Type: "MODIFIED", Kind: "Deployment", Object: dep(20)})
	for i := 12; i < 20; i++ {
		rec.Events = append(rec.Events,
			record.Event{At: start.Add(time.Minute), Type: "ADDED", Kind: "Pod", Object: pod(i, "")},
			record.Event{At: start.Add(150 * time.Second), Type: "MODIFIED", Kind: "Pod", Object: pod(i, "ip-10-1-0-g.ec2.internal")})
	}
	g := nodes[0].DeepCopy()
	g.Name, g.Labels[apiv1.LabelZone] = "ip-10-1-0-g.ec2.internal", "us-east-1a"
	obj, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(g)
	rec.Events = append(rec.Events, record.Event{At: start.Add(140 * time.Second), Type: "ADDED", Kind: "Node", Object: obj})
	return rec, nodes
}

// testWriter logs what is written to it.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
