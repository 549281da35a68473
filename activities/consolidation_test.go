package activities

import (
	"fmt"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A 10% budget over 11 nodes allows two disruptions at a time (rounded
// up, as Karpenter). Single-node
// consolidation must still consider every candidate, most expensive per pod
// first (before, the budget kept only the first NodeClaims by name, and a
// cluster whose first node could not move stayed as it was for good: the
// chaos run's +64% cost); multi-node gets only as many as the budget allows.
func TestConsolidatableBudgetOrder(t *testing.T) {
	pool := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose"}}
	pool.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	pool.Spec.Disruption.ConsolidateAfter = "1m"
	pool.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "10%"}}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var objs []runtime.Object
	var cands []candidate
	for i := 0; i < 11; i++ {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-0-0-%d.ec2.internal", 10+i),
			Labels: map[string]string{apiv1.LabelNodePool: pool.Name}}}
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("general-purpose-%02d", i)}}
		nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
		objs = append(objs, node)
		// Node 7 costs the most per pod; node 0 (first by name) the least.
		price := 0.05 + 0.001*float64(i)
		if i == 7 {
			price = 0.5
		}
		cands = append(cands, candidate{node: node, claim: nc, pool: pool, price: price, pods: 2})
	}
	a := newFakeActivities(t, nil, objs...)

	single := a.consolidatable(cands, now, false)
	if len(single) != 11 || single[0].node.Name != "ip-10-0-0-17.ec2.internal" || single[10].node.Name != "ip-10-0-0-10.ec2.internal" {
		t.Fatalf("single-node candidates: %d, first %s", len(single), single[0].node.Name)
	}
	multi := a.consolidatable(cands, now, true)
	if len(multi) != 2 || multi[0].node.Name != "ip-10-0-0-17.ec2.internal" || multi[1].node.Name != "ip-10-0-0-20.ec2.internal" {
		t.Fatalf("multi-node candidates: %v", names(multi))
	}
	// Too young for consolidateAfter: none.
	if got := a.consolidatable(cands, now.Add(-time.Hour+30*time.Second), false); len(got) != 0 {
		t.Fatalf("young candidates kept: %v", names(got))
	}
}

func names(cs []candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.node.Name)
	}
	return out
}
