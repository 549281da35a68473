package replay

import (
	"context"
	"reflect"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/record"
	"github.com/joinery/joinery/workflows"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// A --rebalance-only replay is handed the recorded nodes when the recorded
// cluster got them, shaped by the labels they ended with: n1 at the
// start, n2 (registered unlabelled, labelled a second later) at 3m; n1's
// removal at 6m is not a step, and a node deleted before the window is
// not recreated.
func TestRecreateRecordedNodes(t *testing.T) {
	rec := recording()
	bare := map[string]any{"metadata": map[string]any{"name": "n2"}}
	gone := nodeObj("n0", "m5.large", "on-demand")
	gone["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-06T09:59:00Z"
	rec.Objects = append(rec.Objects, record.Object{Kind: "Node", Object: gone})
	rec.Events = append([]record.Event{{At: t0.Add(3*time.Minute - time.Second), Type: "ADDED", Kind: "Node", Object: bare}}, rec.Events...)
	rec.Events[3].Type = "MODIFIED" // n2 labelled at 3m
	var got [][]RecordedNode
	r := Runner{Kube: fake.NewClientset(), Dynamic: dynfake.NewSimpleDynamicClient(runtime.NewScheme()), Catalog: catalog.MustDefault(),
		Speed: 1e6, Interval: time.Minute, Recreate: func(_ context.Context, nodes []RecordedNode) error {
			got = append(got, nodes)
			return nil
		}}
	samples, err := r.Run(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]RecordedNode{
		{{Name: "n1", InstanceType: "m5.large", CapacityType: "on-demand"}},
		{{Name: "n2", InstanceType: "c5.xlarge", CapacityType: "spot"}},
	}
	if !reflect.DeepEqual(got, want) || len(samples) != 11 {
		t.Errorf("recreated %+v over %d samples, want %+v over 11", got, len(samples), want)
	}
	if steps := NodeTimeline(rec); len(steps) != 2 || steps[1].At != 3*time.Minute-time.Second {
		t.Errorf("node steps %+v, want n2 at its registration (2m59s)", steps)
	}
}

// Recorded nodes are bought by shape: counted by pool, type, zone and
// capacity type, in the order first seen.
func TestNodeShapes(t *testing.T) {
	m5 := RecordedNode{Name: "a", InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand"}
	c5 := RecordedNode{Name: "b", NodePool: "gp", InstanceType: "c5.xlarge", Zone: "us-east-1b", CapacityType: "spot"}
	m5b := m5
	m5b.Name = "c"
	got := nodeShapes([]RecordedNode{m5, c5, m5b})
	want := []workflows.RecreateNodes{
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand", Count: 2},
		{NodePool: "gp", InstanceType: "c5.xlarge", Zone: "us-east-1b", CapacityType: "spot", Count: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shapes %+v, want %+v", got, want)
	}
}

// The first batch waits for the EC2NodeClasses to be Ready (a plan uses
// no pool whose class is not): a class not Ready by the deadline is an
// error, not a replay without nodes.
func TestClassesReady(t *testing.T) {
	class := func(status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": map[string]any{"name": "default"},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status}}}}}
		return u
	}
	kinds := map[schema.GroupVersionResource]string{apiv1.EC2NodeClassGVR: "EC2NodeClassList"}
	ready := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, class("True"))
	if err := classesReady(context.Background(), ready, 0); err != nil {
		t.Errorf("ready class: %v", err)
	}
	notReady := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, class("False"))
	if err := classesReady(context.Background(), notReady, 0); err == nil {
		t.Error("a class not Ready passed")
	}
}
