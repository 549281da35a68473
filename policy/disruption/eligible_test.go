package disruption

import (
	"reflect"
	"testing"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
)

func TestEligibleByReasonCountsWhatEachMethodMayConsider(t *testing.T) {
	pool, whenEmpty, later := testPool("general-purpose"), testPool("batch"), testPool("slow")
	whenEmpty.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmpty
	later.Spec.Disruption.ConsolidateAfter = "24h" // initialized an hour ago: not yet
	cand := func(i int, p *apiv1.NodePool, pods int) Candidate {
		node, nc := testClaim(i, p)
		return Candidate{Node: node, Claim: nc, Pool: p, Pods: pods}
	}
	drifted := cand(6, pool, 3)
	drifted.Claim = stamped(pool, NodePoolHashVersion)
	drifted.Claim.Annotations[AnnotationNodePoolHash] = "an-older-template"
	p := &Pass{Now: t0, Candidates: []Candidate{
		cand(1, pool, 0),      // empty
		cand(2, pool, 2),      // underutilized
		cand(3, pool, 5),      // underutilized
		cand(4, whenEmpty, 1), // a WhenEmpty pool does not consolidate busy nodes
		cand(5, whenEmpty, 0), // but takes empty ones
		cand(7, later, 0),     // consolidateAfter not passed: nothing
		drifted,               // drifted, and busy on a consolidating pool
	}}
	got := EligibleByReason(p)
	want := map[string]int{saga.ReasonEmpty: 2, saga.ReasonUnderused: 3, saga.ReasonDrifted: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EligibleByReason = %v, want %v", got, want)
	}
	if got := EligibleByReason(&Pass{Now: t0}); !reflect.DeepEqual(got, map[string]int{"drifted": 0, "empty": 0, "underutilized": 0}) {
		t.Errorf("no candidates: %v, want every reason at 0", got)
	}
}
