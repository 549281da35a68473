package disruption

import (
	"math"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

func i32(v int32) *int32 { return &v }

func TestEvictionCostFromDeletionCostPriorityAndClamp(t *testing.T) {
	dc, pdc := apiv1.AnnotationDisruptionCost, corev1.PodDeletionCost
	cases := []struct {
		name        string
		annotations map[string]string
		priority    *int32
		want        float64
	}{
		{"nothing set: one pod", nil, nil, 1},
		{"disruption-cost one band (2^27) above", map[string]string{dc: "134217728"}, nil, 2},
		{"disruption-cost one band below", map[string]string{dc: "-134217728"}, nil, 0},
		{"disruption-cost max int32 clamps to 10", map[string]string{dc: "2147483647"}, nil, 10},
		{"disruption-cost min int32 clamps to -10", map[string]string{dc: "-2147483648"}, nil, -10},
		{"pod-deletion-cost when no disruption-cost", map[string]string{pdc: "268435456"}, nil, 3},
		{"disruption-cost wins over pod-deletion-cost", map[string]string{dc: "0", pdc: "2000000000"}, nil, 1},
		{"a malformed disruption-cost does not fall back", map[string]string{dc: "high", pdc: "2000000000"}, nil, 1},
		{"a malformed pod-deletion-cost counts as absent", map[string]string{pdc: "1e9"}, nil, 1},
		{"a float is not an int32", map[string]string{dc: "1.5"}, nil, 1},
		{"padded with spaces", map[string]string{dc: " 100 "}, nil, 1},
		{"overflows int32", map[string]string{dc: "99999999999"}, nil, 1},
		{"priority one band (2^25)", nil, i32(1 << 25), 2},
		{"priority two bands below", nil, i32(-(2 << 25)), -1},
		{"highest user priority clamps to 10", nil, i32(1000000000), 10},
		{"system-node-critical clamps to 10", nil, i32(2000001000), 10},
		{"deletion cost and priority add up", map[string]string{pdc: "134217728"}, i32(1 << 25), 3},
	}
	for _, c := range cases {
		if got := EvictionCost(c.annotations, c.priority); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: EvictionCost = %v, want %v", c.name, got, c.want)
		}
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{Priority: i32(1 << 25)}}
	p.Annotations = map[string]string{dc: "268435456"}
	if got := PodEvictionCost(p); got != 4 {
		t.Errorf("PodEvictionCost = %v, want 4", got)
	}
}

func TestRescheduleDisruptionCostFloorsPodsAtZero(t *testing.T) {
	cases := []struct {
		costs []float64
		want  float64
	}{
		{nil, 1},
		{[]float64{1, 1, 1}, 4},
		{[]float64{-10}, 1},      // a pod free to evict cannot discount the node
		{[]float64{10, -10}, 11}, // nor cancel another pod
		{[]float64{0.5, 2.25}, 3.75},
	}
	for _, c := range cases {
		if got := RescheduleDisruptionCost(c.costs); got != c.want {
			t.Errorf("RescheduleDisruptionCost(%v) = %v, want %v", c.costs, got, c.want)
		}
	}
}

// Candidates carry their disruption cost from their pods; a node whose
// only pods declare themselves free to evict is empty.
func TestCandidateDisruptionCostEmptyAndSavingsRatio(t *testing.T) {
	pool := testPool("general-purpose")
	owned := func(ann map[string]string, prio *int32) Pod {
		return Pod{Active: true, Reschedulable: true, Controlled: true, Annotations: ann, Priority: prio}
	}
	cheap := map[string]string{corev1.PodDeletionCost: "-2147483648"}
	precious := map[string]string{apiv1.AnnotationDisruptionCost: "2147483647"}
	cases := []struct {
		name  string
		pods  []Pod
		cost  float64
		empty bool
	}{
		{"no pods", nil, 1, true},
		{"three default pods", []Pod{owned(nil, nil), owned(nil, nil), owned(nil, nil)}, 4, false},
		{"only pods free to evict", []Pod{owned(cheap, nil), owned(cheap, nil)}, 1, true},
		{"a precious pod weighs ten", []Pod{owned(precious, nil), owned(nil, nil)}, 12, false},
		{"a critical pod weighs ten", []Pod{owned(nil, i32(2000000000))}, 11, false},
		{"daemon and finished pods do not count", []Pod{{Active: true, Controlled: true, Annotations: precious}, {Active: false, Reschedulable: true}}, 1, true},
	}
	for _, c := range cases {
		node, nc := testClaim(0, pool)
		got := Candidates([]Claim{{Claim: nc, Node: node, Pool: pool, Price: 0.2016, Pods: c.pods}})
		if len(got) != 1 {
			t.Fatalf("%s: %d candidates", c.name, len(got))
		}
		cand := got[0]
		if cand.DisruptionCost() != c.cost || cand.Empty() != c.empty || math.Abs(cand.SavingsRatio()-0.2016/c.cost) > 1e-12 {
			t.Errorf("%s: cost %v empty %v ratio %v, want %v %v %v", c.name, cand.DisruptionCost(), cand.Empty(), cand.SavingsRatio(), c.cost, c.empty, 0.2016/c.cost)
		}
	}
	// A node holding a capacity buffer's virtual pods is not empty, though
	// they add no disruption cost (moving them evicts nothing).
	node, nc := testClaim(0, pool)
	if got := Candidates([]Claim{{Claim: nc, Node: node, Pool: pool, Price: 0.2, BufferPods: 3}}); len(got) != 1 || got[0].Empty() || got[0].DisruptionCost() != 1 || got[0].BufferPods != 3 {
		t.Errorf("buffer node: %+v", got)
	}
	// Built by hand without a cost, a candidate counts its pods at 1 each.
	if c := (Candidate{Pods: 2, Price: 0.75}); c.DisruptionCost() != 3 || c.Empty() || c.SavingsRatio() != 0.25 {
		t.Errorf("hand-built: %v %v %v", c.DisruptionCost(), c.Empty(), c.SavingsRatio())
	}
}
