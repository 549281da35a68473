package replay

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/record"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func tainted(n map[string]any, keys ...string) map[string]any {
	var taints []any
	for _, k := range keys {
		taints = append(taints, map[string]any{"key": k, "effect": "NoSchedule"})
	}
	n["spec"] = map[string]any{"taints": taints}
	return n
}

func podOn(name, node string, deleting bool, owner string) map[string]any {
	md := map[string]any{"name": name, "namespace": "shop", "uid": "u-" + name}
	if owner != "" {
		md["ownerReferences"] = []any{map[string]any{"kind": owner, "name": "x", "controller": true}}
	}
	if deleting {
		md["deletionTimestamp"] = "2026-12-06T10:02:10Z"
	}
	return map[string]any{"metadata": md, "spec": map[string]any{"nodeName": node}, "status": map[string]any{"phase": "Running"}}
}

// The recording's disruption is read from taints and deletions: a pod
// whose deletion began on a node being drained is an eviction (once, and
// not a DaemonSet's); a spot node gone unreachable is an interruption
// (once), an on-demand one is not, and a drained spot node is not either.
func TestRecordedDisruption(t *testing.T) {
	rc := RecordedCapacity(disruptionRecording(), catalog.MustDefault())
	if got := rc.disruption.evictions; len(got) != 1 || got[0] != 130*time.Second {
		t.Errorf("evictions at %v, want [2m10s]", got)
	}
	if got := rc.Interruptions(); len(got) != 1 || got[0].At != 4*time.Minute || got[0].Node.Name != "n3" {
		t.Errorf("interruptions %+v, want n3 at 4m0s", got)
	}
	if rc.EvictionsBetween(2*time.Minute, 3*time.Minute) != 1 || rc.EvictionsBetween(0, 2*time.Minute) != 0 ||
		rc.InterruptionsBetween(3*time.Minute, 4*time.Minute) != 1 || rc.InterruptionsBetween(4*time.Minute, 5*time.Minute) != 0 {
		t.Errorf("counts by interval are off")
	}
}

// A replay given Interrupt inflicts each recorded interruption once, with
// the interrupted node's shape; one it cannot inflict is logged, and the
// replay goes on.
func TestReplayInflictsRecordedInterruptions(t *testing.T) {
	var got []RecordedNode
	var log strings.Builder
	r := Runner{Kube: fake.NewClientset(), Dynamic: dynfake.NewSimpleDynamicClient(runtime.NewScheme()), Catalog: catalog.MustDefault(),
		Speed: 1e6, Interval: time.Minute, Log: &log, Interrupt: func(_ context.Context, n RecordedNode) error {
			got = append(got, n)
			return fmt.Errorf("no spot node")
		}}
	samples, err := r.Run(context.Background(), disruptionRecording())
	if err != nil {
		t.Fatal(err)
	}
	want := []RecordedNode{{Name: "n3", InstanceType: "m5.large", CapacityType: "spot"}}
	if !reflect.DeepEqual(got, want) || len(samples) != 11 || !strings.Contains(log.String(), "4m0s: the recorded spot interruption of a m5.large not replayed: no spot node") {
		t.Errorf("interrupted %+v over %d samples, log %q; want %+v over 11", got, len(samples), log.String(), want)
	}
	if samples[4].RecordedInterrupted != 1 || samples[3].RecordedEvicted != 1 {
		t.Errorf("recorded disruption by sample: %+v", samples)
	}
}

func disruptionRecording() *record.Recording {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	return &record.Recording{Version: record.Version, Start: t0, End: t0.Add(10 * time.Minute),
		Objects: []record.Object{
			{Kind: "Node", Object: nodeObj("n1", "m5.large", "spot")}, {Kind: "Node", Object: nodeObj("n2", "m5.large", "on-demand")},
			{Kind: "Node", Object: nodeObj("n3", "m5.large", "spot")}, {Kind: "Node", Object: nodeObj("n4", "m5.large", "on-demand")},
			{Kind: "Pod", Object: podOn("a", "n1", false, "ReplicaSet")}, {Kind: "Pod", Object: podOn("ds", "n1", false, "DaemonSet")},
			{Kind: "Pod", Object: podOn("b", "n2", false, "")},
		},
		Events: []record.Event{
			{At: at(2 * time.Minute), Type: "MODIFIED", Kind: "Node", Object: tainted(nodeObj("n1", "m5.large", "spot"), "karpenter.sh/disrupted")},
			{At: at(130 * time.Second), Type: "MODIFIED", Kind: "Pod", Object: podOn("a", "n1", true, "ReplicaSet")},
			{At: at(140 * time.Second), Type: "DELETED", Kind: "Pod", Object: podOn("a", "n1", true, "ReplicaSet")},
			{At: at(140 * time.Second), Type: "DELETED", Kind: "Pod", Object: podOn("ds", "n1", true, "DaemonSet")},
			{At: at(150 * time.Second), Type: "DELETED", Kind: "Node", Object: tainted(nodeObj("n1", "m5.large", "spot"), "karpenter.sh/disrupted")},
			{At: at(3 * time.Minute), Type: "DELETED", Kind: "Pod", Object: podOn("b", "n2", true, "")},
			{At: at(4 * time.Minute), Type: "MODIFIED", Kind: "Node", Object: tainted(nodeObj("n3", "m5.large", "spot"), "node.kubernetes.io/unreachable")},
			{At: at(5 * time.Minute), Type: "DELETED", Kind: "Node", Object: tainted(nodeObj("n3", "m5.large", "spot"), "node.kubernetes.io/unreachable")},
			{At: at(4 * time.Minute), Type: "MODIFIED", Kind: "Node", Object: tainted(nodeObj("n4", "m5.large", "on-demand"), "node.kubernetes.io/unreachable")},
		}}
}

func event(name, reason, source, kind, obj string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Reason: reason, Source: corev1.EventSource{Component: source},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: obj, UID: types.UID("uid-" + obj)}}
}

// Each pod Joinery evicted and each Node it drained for a spot warning is
// counted once, at the first sample that sees its Event; other
// components' Events and the NodeClaim's copy are not counted.
func TestEventCounter(t *testing.T) {
	ctx := context.Background()
	kc := fake.NewClientset(
		event("a.1", reasonEvicted, eventSource, "Pod", "a"), event("b.1", reasonEvicted, eventSource, "Pod", "b"),
		event("c.1", reasonEvicted, "kubelet", "Pod", "c"), event("n1.1", reasonSpotNotice, eventSource, "Node", "n1"),
		event("nc1.1", reasonSpotNotice, eventSource, "NodeClaim", "nc1"), event("a.2", "Nominated", eventSource, "Pod", "a"))
	var c eventCounter
	if ev, in, err := c.count(ctx, kc); err != nil || ev != 2 || in != 1 {
		t.Fatalf("first count: %d evicted, %d interrupted, %v; want 2, 1", ev, in, err)
	}
	e := event("a.1", reasonEvicted, eventSource, "Pod", "a")
	e.Count = 2 // evicted again: the same pod
	if _, err := kc.CoreV1().Events("shop").Update(ctx, e, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Events("shop").Create(ctx, event("d.1", reasonEvicted, eventSource, "Pod", "d"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev, in, err := c.count(ctx, kc); err != nil || ev != 1 || in != 0 {
		t.Errorf("second count: %d evicted, %d interrupted, %v; want 1, 0", ev, in, err)
	}
}
