package controller

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testobj"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rl is testobj.ResourceList, short for the many lists here.
var rl = testobj.ResourceList

func TestPoolResourcesSumsCapacityOfLiveNodesAsKarpenter(t *testing.T) {
	gone := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	claim := func(name, pool, node string, capacity corev1.ResourceList) *apiv1.NodeClaim {
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: pool}}}
		nc.Status.NodeName, nc.Status.Capacity = node, capacity
		return nc
	}
	node := func(name, pool string, capacity corev1.ResourceList) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: pool}}}
		n.Status.Capacity = capacity
		return n
	}
	m7i := rl("cpu", "2", "memory", "8Gi", "pods", "29", "ephemeral-storage", "20Gi")
	deleting := claim("a-3", "a", "n3", m7i)
	deleting.DeletionTimestamp = &gone
	claims := []*apiv1.NodeClaim{
		claim("a-1", "a", "n1", m7i),                                          // registered: the Node's capacity
		claim("a-2", "a", "", rl("cpu", "4", "memory", "16Gi", "pods", "58")), // launched, no Node yet
		deleting,                     // being deleted: not counted
		claim("a-4", "a", "", nil),   // not launched: no capacity, not a node
		claim("b-1", "b", "n4", m7i), // its Node reports no memory yet: the claim's
	}
	nodes := []*corev1.Node{
		node("n1", "a", rl("cpu", "2", "memory", "7868Mi", "pods", "29", "ephemeral-storage", "19Gi", "hugepages-2Mi", "0")),
		node("n3", "a", m7i),
		node("n4", "b", rl("cpu", "2", "pods", "29")),
		node("n5", "b", rl("cpu", "8", "memory", "32Gi", "pods", "58")), // a Node of the pool without a NodeClaim
	}
	got := PoolResources([]string{"a", "b", "empty"}, claims, nodes)
	want := map[string]corev1.ResourceList{
		"a":     rl("cpu", "6", "memory", "7868Mi", "pods", "87", "ephemeral-storage", "19Gi", "nodes", "2", "hugepages-2Mi", "0"),
		"b":     rl("cpu", "10", "memory", "40Gi", "pods", "87", "ephemeral-storage", "20Gi", "nodes", "2"),
		"empty": rl("cpu", "0", "memory", "0", "pods", "0", "ephemeral-storage", "0", "nodes", "0"),
	}
	// 7868Mi + 16Gi for a's memory.
	mem := resource.MustParse("7868Mi")
	mem.Add(resource.MustParse("16Gi"))
	want["a"]["memory"] = mem
	for pool, w := range want {
		g := got[pool]
		if len(g) != len(w) {
			t.Errorf("%s: %v, want %v", pool, g, w)
			continue
		}
		for name, q := range w {
			if have := g[name]; have.Cmp(q) != 0 {
				t.Errorf("%s %s = %s, want %s", pool, name, have.String(), q.String())
			}
		}
	}
	if _, ok := got["unknown"]; ok {
		t.Error("a pool not named got resources")
	}
}

func TestNodePoolStatusPatchWritesOnlyChanges(t *testing.T) {
	np := &apiv1.NodePool{}
	want := rl("cpu", "4", "memory", "16Gi", "pods", "58", "ephemeral-storage", "40Gi", "nodes", "2")
	patch, ok := nodePoolStatusPatch(np, want)
	if !ok {
		t.Fatal("no patch for an empty status")
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	wantStatus := map[string]any{"nodes": 2.0, "resources": map[string]any{"cpu": "4", "memory": "16Gi", "pods": "58", "ephemeral-storage": "40Gi", "nodes": "2"}}
	if !reflect.DeepEqual(got["status"], wantStatus) {
		t.Errorf("patch status = %v, want %v", got["status"], wantStatus)
	}
	two := int64(2)
	np.Status.Nodes, np.Status.Resources = &two, rl("cpu", "4000m", "memory", "16Gi", "pods", "58", "ephemeral-storage", "40Gi", "nodes", "2")
	if _, ok := nodePoolStatusPatch(np, want); ok {
		t.Error("patch written though the status already says so")
	}
	np.Status.Resources["hugepages-1Gi"] = resource.MustParse("0")
	patch, ok = nodePoolStatusPatch(np, want)
	if !ok || !json.Valid(patch) || !strings.Contains(string(patch), `"hugepages-1Gi":null`) {
		t.Errorf("a resource no longer there is not removed: %s", patch)
	}
}
