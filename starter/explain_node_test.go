package main

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/workflows"
)

// explain node reads the Consolidation workflow's last pass: a node listed
// with a candidate-filtering reason is not a candidate, one listed with
// only consolidation's reasons is, one a complete list does not name is,
// and a truncated list says nothing; decisions naming the node are shown.
func TestExplainNodeFromStatus(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pdb := saga.BlockReason{Reason: "pdb", Event: "DisruptionBlocked", Message: "PDB default/web prevents pod evictions (pod default/web-1)"}
	fit := saga.BlockReason{Reason: "would_not_fit", Event: "Unconsolidatable", Message: "Pod default/big cannot move: no room"}
	st := workflows.ConsolidationStatus{ConsolidationState: workflows.ConsolidationState{
		LastPass: &workflows.PassReport{At: at, Why: "nothing to do among 3 candidates", Eligible: 3, BlockedReport: saga.BlockedReport{
			Total: 2, ByReason: map[string]int{"pdb": 1, "would_not_fit": 1},
			Nodes: []saga.BlockedNode{
				{Node: "n-pdb", NodeClaim: "c-pdb", NodePool: "p", Reasons: []saga.BlockReason{pdb, fit}},
				{Node: "n-fit", NodeClaim: "c-fit", NodePool: "p", Reasons: []saga.BlockReason{fit}},
			}}},
		History: []workflows.DecisionRecord{{At: at.Add(-time.Hour), Outcome: "dropped: saving fell",
			Decision: saga.DisruptionDecision{Method: saga.MethodSingleNode, Nodes: []string{"n-free"}, Why: "pods fit on the rest"}}},
	}}
	cases := []struct {
		node, claim string
		candidate   string
		reasons     int
		decisions   int
	}{
		{"n-pdb", "c-pdb", "no", 2, 0},
		{"n-fit", "c-fit", "yes", 1, 0},
		{"n-free", "c-free", "yes", 0, 1},
		{"", "c-fit", "yes", 1, 0}, // found by its NodeClaim
	}
	for _, c := range cases {
		ex := &NodeExplanation{Node: c.node, NodeClaim: c.claim}
		ex.fromStatus(st)
		if ex.Candidate != c.candidate || len(ex.Reasons) != c.reasons || len(ex.Decisions) != c.decisions ||
			ex.LastPass != "2026-12-01T12:00:00Z: nothing to do among 3 candidates" {
			t.Errorf("%s: %+v", c.node, ex)
		}
	}
	if ex := (&NodeExplanation{Node: "n-free"}); true {
		ex.fromStatus(st)
		if !strings.Contains(ex.Decisions[0], "single-node n-free -> dropped: saving fell (pods fit on the rest)") {
			t.Errorf("decision %q", ex.Decisions[0])
		}
	}
	st.LastPass.Total = 60 // more than listed: a node not named is unknown
	ex := &NodeExplanation{Node: "n-other"}
	ex.fromStatus(st)
	if ex.Candidate != "unknown" {
		t.Errorf("truncated list: %+v", ex)
	}
	st.LastPass = nil
	ex = &NodeExplanation{Node: "n-pdb"}
	ex.fromStatus(st)
	if ex.Candidate != "unknown" || ex.LastPass != "" {
		t.Errorf("no pass yet: %+v", ex)
	}
}
