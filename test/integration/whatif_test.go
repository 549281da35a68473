//go:build integration

package integration

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/preview/live"
	"github.com/joinery/joinery/preview/whatif"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// whatIfAfterTolerance is how far the cost the controller settles at may
// be from what-if's "after", as a fraction of it: the solver's anytime
// variation. The preview plans the drifted nodes' pods in one solve with
// the whole search (budget -1); the controller plans each drained node's
// pods with its 1 s anytime budget, and consolidation then takes only
// strictly cheaper moves. Here each replacement holds one pod (required
// anti-affinity), so the only choice is the type, and the first plan
// already takes the cheapest one that fits; on-demand prices do not
// move. 5% is below the price step to any other fitting m7i or c7i size
// (the next size doubles it), so a different plan fails the test.
const whatIfAfterTolerance = 0.05

// Issue 20: starter what-if, narrowing a NodePool's instance families.
// The nodes it lists as drifted are exactly the pool's nodes outside the
// new families; its "before" cost is the controller's (`starter status`)
// to the cent; once the change is applied and the drift replacements
// settle, the controller's cost is what-if's "after" within
// whatIfAfterTolerance.
func TestWhatIfNarrowedFamilies(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	e.applyWithDefaultClass(t, "testdata/whatif.yaml")
	if _, err := world.WaitSettled(e.ctx, e.kc, 5, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	families := func() map[string]string {
		nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=what-if"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range nodes.Items {
			if n.DeletionTimestamp == nil {
				out[n.Name] = n.Labels[apiv1.LabelInstanceFamily]
			}
		}
		return out
	}
	before := e.settledCost(t, families)
	fams := families()
	t.Logf("before: %v, status %.4f USD/hour", fams, before)
	var outside []string
	for n, f := range fams {
		if f != "c7i" && f != "m7i" {
			outside = append(outside, n)
		}
	}
	sort.Strings(outside)
	if len(outside) == 0 || len(outside) == len(fams) {
		t.Fatalf("nodes %v: want some inside and some outside c7i/m7i, else the test proves nothing", fams)
	}

	ch, notes, err := whatif.ReadChange("testdata/whatif-narrow.yaml")
	if err != nil || len(notes) > 0 {
		t.Fatalf("read the change: %v %v", err, notes)
	}
	acts, stop, err := live.Open(e.ctx, live.Options{REST: e.w.Kube.RESTConfig(), EC2Endpoint: e.w.EC2Endpoint, Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	st := live.Preview(acts, ch, time.Now())
	stop()
	r := whatif.Analyze(st, ch, whatif.DefaultTiming, -1)
	var drifted []string
	for _, d := range r.Drifted {
		drifted = append(drifted, d.Node.Node)
		if d.Reason != "RequirementsDrifted" || !strings.Contains(d.Message, "instance-family In [c7i m7i]") {
			t.Errorf("%s: %s %q, want RequirementsDrifted naming the new families", d.Node.Node, d.Reason, d.Message)
		}
	}
	var order []string
	for _, s := range r.Order {
		order = append(order, s.Node)
	}
	var text strings.Builder
	whatif.WriteText(&text, whatif.Output{At: st.Now.UTC().Truncate(time.Second), Prices: "ec2", Change: &r}, whatif.DefaultTiming)
	t.Logf("starter what-if -f testdata/whatif-narrow.yaml:\n%s", text.String())
	if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(drifted, outside) || !slices.Equal(sorted, outside) {
		t.Errorf("drifted %v (order %v), want exactly the nodes outside c7i/m7i %v", drifted, order, outside)
	}
	if math.Abs(r.BeforeUSDHour-before) > 1e-6 {
		t.Errorf("what-if before %.6f USD/hour, starter status %.6f", r.BeforeUSDHour, before)
	}
	if len(r.Unschedulable) > 0 {
		t.Errorf("unschedulable %v: the m7i nodes admit every pod", r.Unschedulable)
	}
	for _, c := range r.Replacements {
		if !strings.HasPrefix(c.InstanceType, "m7i.") && !strings.HasPrefix(c.InstanceType, "c7i.") {
			t.Errorf("replacement %s outside the new families", c.InstanceType)
		}
	}

	objs := readManifests(t, "testdata/whatif-narrow.yaml")
	e.apply(t, objs)
	waitFor(t, 4*time.Minute, "every node of the pool in c7i/m7i", func() bool {
		for _, f := range families() {
			if f != "c7i" && f != "m7i" {
				return false
			}
		}
		return true
	})
	if _, err := world.WaitSettled(e.ctx, e.kc, 5, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	after := e.settledCost(t, families)
	// The controller took the drifted nodes in the order what-if said.
	v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
	var cs workflows.ConsolidationStatus
	if err != nil || v.Get(&cs) != nil {
		t.Fatalf("status query: %v", err)
	}
	var took []string
	for _, h := range cs.History {
		if h.Decision.Method == saga.MethodDrift && !slices.Contains(took, h.Decision.Nodes[0]) {
			took = append(took, h.Decision.Nodes[0])
			t.Logf("controller: %s %v at %s -> %s", h.Decision.Method, h.Decision.Nodes, h.At.Format(time.RFC3339), h.Outcome)
		}
	}
	if !slices.Equal(took, order) {
		t.Errorf("the controller drifted %v, what-if's order %v", took, order)
	}
	t.Logf("after: %v, status %.4f USD/hour; what-if said %.4f (%+.1f%%)", families(), after, r.AfterUSDHour, 100*(after-r.AfterUSDHour)/r.AfterUSDHour)
	if math.Abs(after-r.AfterUSDHour) > whatIfAfterTolerance*r.AfterUSDHour {
		t.Errorf("settled at %.4f USD/hour, what-if said %.4f: more than %.0f%% apart", after, r.AfterUSDHour, 100*whatIfAfterTolerance)
	}

	// The rebalance preview of the settled cluster: the plan is no
	// dearer than the bound allows, and not below the bound; the system
	// nodes are kept as they are.
	acts, stop, err = live.Open(e.ctx, live.Options{REST: e.w.Kube.RESTConfig(), EC2Endpoint: e.w.EC2Endpoint, Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	st = live.Preview(acts, whatif.Change{}, time.Now())
	stop()
	rb := whatif.RebalancePlan(st.Before, solver.DefaultBudget)
	t.Logf("rebalance: now %.4f, re-planned %.4f, lower bound %.4f (ratio %.3f), %d nodes", rb.NowUSDHour, rb.PlanUSDHour, rb.LowerBoundUSDHour, rb.Ratio, len(rb.Nodes))
	if math.Abs(rb.NowUSDHour-rb.KeptUSDHour-after) > 1e-6 || rb.Kept != systemNodes || rb.LowerBoundUSDHour <= 0 || rb.LowerBoundUSDHour > rb.PlanUSDHour+1e-9 || len(rb.Unschedulable) > 0 {
		t.Errorf("rebalance %+v", rb)
	}
}

// settledCost waits until the consolidation workflow has made 5 passes
// with the pool's nodes and its cost unchanged, and returns that cost
// (`starter status`'s "nodes cost now").
func (e *env) settledCost(t *testing.T, nodes func() map[string]string) float64 {
	t.Helper()
	var cost float64
	var lastNodes string
	passes := -1
	waitFor(t, 3*time.Minute, "the cluster's cost steady for 5 passes", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		var st workflows.ConsolidationStatus
		if err != nil || v.Get(&st) != nil {
			return false
		}
		n := fmt.Sprint(nodes())
		if n != lastNodes || st.USDPerHour != cost || st.USDPerHour == 0 {
			lastNodes, cost, passes = n, st.USDPerHour, st.Passes
			return false
		}
		return st.Passes >= passes+5
	})
	return cost
}
