package catalog

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// A NodeClass's nodes of a type are planned with the memory a registered
// node of that type reported on one of the class's images (the smallest
// seen), and with the estimate until one has.
func TestLearnedNodeMemoryReplacesTheEstimate(t *testing.T) {
	m5, _ := MustDefault().Get("m5.large")
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}},
		Status: apiv1.EC2NodeClassStatus{AMIs: []apiv1.AMIStatus{{ID: "ami-a"}, {ID: "ami-b"}}}}
	m := NewMarket()
	var told []string
	m.OnLearnNodeMemory(func(key string, _ int64) { told = append(told, key) })
	if got := m5.ShapeOf(m.LaunchOf(cls)).Capacity[resources.Memory] >> 20; got != 7577 {
		t.Fatalf("before any node: %d MiB, want the estimate 7577", got)
	}
	if !m.LearnNodeMemory("m5.large", "ami-b", 7846<<20) || m.LearnNodeMemory("m5.large", "ami-b", 7900<<20) {
		t.Fatal("a first value must be learned, a larger one must not")
	}
	m.LearnNodeMemory("m5.large", "ami-other", 6000<<20) // another class's image
	sh := m5.ShapeOf(m.LaunchOf(cls))
	if got := sh.Capacity[resources.Memory] >> 20; got != 7846 {
		t.Errorf("learned: %d MiB, want 7846", got)
	}
	if got := sh.Allocatable[resources.Memory] >> 20; got != 7846-574-100 {
		t.Errorf("allocatable %d MiB, want %d", got, 7846-574-100)
	}
	m.MergeNodeMemory(map[string]int64{NodeMemoryKey("m5.large", "ami-a"): 7800 << 20})
	if got := m5.ShapeOf(m.LaunchOf(cls)).Capacity[resources.Memory] >> 20; got != 7800 {
		t.Errorf("after another replica's smaller value: %d MiB, want 7800", got)
	}
	if len(told) != 2 || told[0] != "m5.large_ami-b" || told[1] != "m5.large_ami-other" {
		t.Errorf("told %v, want the two values learned here", told)
	}
	var nilMarket *Market
	if got := m5.ShapeOf(nilMarket.LaunchOf(cls)).Capacity[resources.Memory] >> 20; got != 7577 {
		t.Errorf("nil market: %d MiB, want the estimate", got)
	}
}
