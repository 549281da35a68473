package solver

import "testing"

// The cost of Joinery's nodes (consolidation's figure, what-if's) leaves
// out a managed node group's nodes, which NodesPrice(..., false) sums.
func TestNodesPriceSplitsOwnedFromTheOthers(t *testing.T) {
	nodes := []Node{
		{Name: "ip-10-0-0-1.ec2.internal", NodePool: "general-purpose", Price: 0.096},
		{Name: "system-0", Price: 0.096},
		{Name: "ip-10-0-0-2.ec2.internal", NodePool: "general-purpose", Price: 0.0672},
	}
	if got := NodesPrice(nodes, true); got != 0.096+0.0672 {
		t.Errorf("owned = %v, want %v (system-0 left out)", got, 0.096+0.0672)
	}
	if got := NodesPrice(nodes, false); got != 0.096 {
		t.Errorf("others = %v, want 0.096 (system-0 only)", got)
	}
}
