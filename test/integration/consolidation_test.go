//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Field case 2: scale inflate from 50 to 5 replicas; within a few passes
// the cluster shrinks to about the cheapest set of nodes for 5 pods.
//
// Long form: TestConsolidationMovesEachPodOnce covers the short form's
// scale-down (with budgets of 100% and disruption paused while it
// scales) and the disruption metrics; this one keeps the example's own
// budget and the passes running throughout.
func TestConsolidationShrinksTheClusterAfterScaleDown(t *testing.T) {
	long(t, "TestConsolidationMovesEachPodOnce (inflate 50 -> 5 shrinks the cluster; Karpenter's disruption metrics)")
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		c.MetricsAddr = metricsAddr
	})
	applyInflate(t, e, "5s", "") // consolidateAfter 1m in the example; shortened so the test takes seconds
	if _, err := world.WaitSettled(e.ctx, e.kc, 50, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	before, err := world.Summarize(e.ctx, e.kc, 50)
	if err != nil {
		t.Fatal(err)
	}
	nodesBefore := 0
	for _, g := range before.Nodes {
		nodesBefore += g.Count
	}
	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "inflate", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// 5 pods of 1 CPU fit on one node of 8 vCPU or less: the cheapest set is
	// a single small node, which costs far less than a tenth of 50 pods' nodes.
	var after *world.Settled
	waitFor(t, 4*time.Minute, "the cluster to shrink", func() bool {
		s, err := world.Summarize(e.ctx, e.kc, 5)
		if err != nil {
			return false
		}
		after = s
		n := 0
		for _, g := range s.Nodes {
			n += g.Count
		}
		return n <= 2 && s.USDPerHour < before.USDPerHour/5
	})
	if _, err := world.WaitSettled(e.ctx, e.kc, 5, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	// A decision is recorded once its drains have finished, which can be a
	// moment after its nodes are gone.
	var st workflows.ConsolidationStatus
	for deadline := time.Now().Add(time.Minute); len(st.History) == 0 && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("before: %d nodes %.4f USD/h; after %s: %s", nodesBefore, before.USDPerHour, time.Since(start).Round(time.Second), fmt.Sprint(after.Nodes))
	for _, r := range st.History {
		t.Logf("decision %s %v at %.4f USD/h -> %s (%s)", r.Decision.Method, r.Decision.Nodes, r.Decision.USDPerHour, r.Outcome, r.Decision.Why)
	}
	if len(st.History) == 0 {
		t.Error("no decision recorded in the consolidation workflow")
	}
	if nodesBefore < 3 {
		t.Errorf("only %d nodes for 50 pods before scaling down: the test proves nothing", nodesBefore)
	}
	recordHistories(t, e, workflows.ConsolidationWorkflowID)

	checkConsolidationMetrics(t, e, st)
}

// checkConsolidationMetrics: Karpenter's disruption metrics moved with
// the decisions st records.
func checkConsolidationMetrics(t *testing.T, e *env, st workflows.ConsolidationStatus) {
	t.Helper()
	fams := scrapeFamilies(t, e.addr(metricsAddr))
	for _, c := range []struct {
		name  string
		match map[string]string
	}{
		{"karpenter_voluntary_disruption_decisions_total", nil},
		{"karpenter_voluntary_disruption_decisions_by_nodepool_total", map[string]string{"nodepool": "general-purpose"}},
		{"karpenter_nodeclaims_disrupted_total", map[string]string{"nodepool": "general-purpose", "consolidation_policy": "when_empty_or_underutilized"}},
		{"karpenter_nodeclaims_terminated_total", map[string]string{"nodepool": "general-purpose"}},
		{"karpenter_nodes_terminated_total", map[string]string{"nodepool": "general-purpose"}},
		{"karpenter_cloudprovider_duration_seconds", map[string]string{"method": "Delete", "controller": "nodeclaim.lifecycle"}},
		{"karpenter_voluntary_disruption_decision_evaluation_duration_seconds", nil},
		{"karpenter_nodepools_allowed_disruptions", map[string]string{"nodepool": "general-purpose", "reason": "Underutilized"}},
	} {
		if got := sumOf(fams, c.name, c.match); got < 1 {
			t.Errorf("%s%v = %v, want >= 1", c.name, c.match, got)
		}
	}
	if got := sumOf(fams, "karpenter_voluntary_disruption_eligible_nodes", map[string]string{"reason": "underutilized"}); got < 0 {
		t.Error("no karpenter_voluntary_disruption_eligible_nodes{reason=underutilized}")
	}
	// As many disruption decisions acted on as the workflow recorded done.
	done := 0.0
	for _, r := range st.History {
		if strings.HasPrefix(r.Outcome, "done") {
			done++
		}
	}
	if got := sumOf(fams, "karpenter_voluntary_disruption_decisions_total", nil); got < done {
		t.Errorf("karpenter_voluntary_disruption_decisions_total = %v, want >= %v (decisions done)", got, done)
	}
	checkListed(t, fams, "consolidation")
}
