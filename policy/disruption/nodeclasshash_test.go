package disruption

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spec.cpuOptions is a static launch setting, hashed as Karpenter's
// EC2NodeClass hash includes it: setting it, or changing its value, drifts
// the class's nodes (NodeClassDrift); a class that does not set it keeps
// the hash it had before the field was honoured, so an upgrade drifts
// nothing.
func TestNodeClassHashCoversCPUOptions(t *testing.T) {
	yes := true
	base := func() *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{
			Role: "KarpenterNodeRole", DetailedMonitoring: &yes,
			AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	}
	// The hash of this class before cpuOptions was honoured (commit 8316b75).
	const before = "3876c2e6808d7304"
	if h := NodeClassHash(base()); h != before {
		t.Errorf("a class without cpuOptions hashes %s, want %s as before", h, before)
	}
	hashes := map[string]string{"": NodeClassHash(base())}
	for _, v := range []string{apiv1.NestedVirtualizationEnabled, apiv1.NestedVirtualizationDisabled} {
		cls := base()
		cls.Spec.CPUOptions = &apiv1.CPUOptions{NestedVirtualization: &v}
		h := NodeClassHash(cls)
		for was, other := range hashes {
			if h == other {
				t.Errorf("nestedVirtualization %s hashes as %q", v, was)
			}
		}
		hashes[v] = h
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{AnnotationNodeClassHash: before}}}
		if reason, _ := Drift(claim, nil, nil, cls, nil, nodeclass.Launched{}); reason != ReasonNodeClassDrift {
			t.Errorf("nestedVirtualization %s set on the class: drift %q, want %s", v, reason, ReasonNodeClassDrift)
		}
	}
}

// placementGroupSelector is in the class's hash, as in Karpenter's (its
// field has no hash:"ignore"): setting or changing it drifts the class's
// nodes (NodeClassDrift); a class without it keeps its hash.
func TestNodeClassHashCoversPlacementGroupSelector(t *testing.T) {
	yes := true
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{
		Role: "KarpenterNodeRole", DetailedMonitoring: &yes, AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	const before = "3876c2e6808d7304"
	if h := NodeClassHash(cls); h != before {
		t.Errorf("a class without a placement group hashes %s, want %s as before", h, before)
	}
	seen := map[string]bool{before: true}
	for _, name := range []string{"hpc", "etcd"} {
		cls.Spec.PlacementGroupSelector = &apiv1.PlacementGroupSelector{Name: &name}
		h := NodeClassHash(cls)
		if seen[h] {
			t.Errorf("placement group %s hashes as another class (%s)", name, h)
		}
		seen[h] = true
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{AnnotationNodeClassHash: before}}}
		if reason, _ := Drift(claim, nil, nil, cls, nil, nodeclass.Launched{}); reason != ReasonNodeClassDrift {
			t.Errorf("placement group %s set: drift %q, want %s", name, reason, ReasonNodeClassDrift)
		}
	}
}
