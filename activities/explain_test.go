package activities

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

func drainEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			sort.Strings(out)
			return out
		}
	}
}

// A pass publishes each reason once on the Node and the NodeClaim (and a
// blocking budget on the NodePool), not again on the next pass while the
// dedupe timeout runs, again when the message changes; the gauge counts
// nodes by reason and reads 0 for a reason that cleared.
func TestReportBlockedPublishesEventsOnceAndSetsTheGauge(t *testing.T) {
	a := newFake(t, kubetest.World{}, func(d *Deps) { d.Metrics = metrics.New() })
	rec := record.NewFakeRecorder(100)
	a.cluster().Recorder = rec
	pdb := disruption.Block{Kind: disruption.BlockPDB, Message: "PDB default/web prevents pod evictions (pod default/web-1)"}
	blocked := []disruption.Blocked{
		{NodeClaim: "general-a", Node: "ip-10-0-0-4.ec2.internal", NodePool: "general", Blocks: []disruption.Block{pdb,
			{Kind: disruption.BlockBudget, BudgetReason: "Underutilized", Message: "No allowed disruptions for disruption reason Underutilized due to blocking budget (NodePool general allows 0, 0 being disrupted)"}}},
		{NodeClaim: "general-b", Node: "ip-10-0-0-5.ec2.internal", NodePool: "general", Blocks: []disruption.Block{
			{Kind: disruption.BlockWouldNotFit, Message: "Pod default/big cannot move: no room"}}},
		{NodeClaim: "general-c", Node: "ip-10-0-0-6.ec2.internal", NodePool: "general", Blocks: []disruption.Block{
			{Kind: disruption.BlockConsolidateAfter, Message: "Node is not consolidatable yet: consolidateAfter 1m has not elapsed"}}},
	}
	var d saga.DisruptionDecision
	a.Disruption.reportBlocked(context.Background(), &d, nil, blocked)
	want := []string{
		"Normal DisruptionBlocked No allowed disruptions for disruption reason Underutilized due to blocking budget",
		"Normal DisruptionBlocked No allowed disruptions for disruption reason Underutilized due to blocking budget (NodePool general allows 0, 0 being disrupted)",
		"Normal DisruptionBlocked No allowed disruptions for disruption reason Underutilized due to blocking budget (NodePool general allows 0, 0 being disrupted)",
		"Normal DisruptionBlocked PDB default/web prevents pod evictions (pod default/web-1)",
		"Normal DisruptionBlocked PDB default/web prevents pod evictions (pod default/web-1)",
		"Normal Unconsolidatable Pod default/big cannot move: no room",
		"Normal Unconsolidatable Pod default/big cannot move: no room",
	}
	if got := drainEvents(rec); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.Blocked == nil || d.Blocked.Total != 3 || len(d.Blocked.Nodes) != 3 || d.Blocked.ByReason["pdb"] != 1 {
		t.Fatalf("report %+v", d.Blocked)
	}
	if v := testutil.ToFloat64(a.Disruption.metrics.DisruptionBlockedNodes.WithLabelValues("would_not_fit")); v != 1 {
		t.Fatalf("would_not_fit gauge %v", v)
	}
	// The next passes: the same reasons publish nothing, even when their
	// message changes (a PDB's pods); the status has the new message.
	a.Disruption.reportBlocked(context.Background(), &d, nil, blocked)
	if got := drainEvents(rec); len(got) != 0 {
		t.Fatalf("republished %v", got)
	}
	blocked[1].Blocks[0].Message = "Pod default/bigger cannot move: no room"
	a.Disruption.reportBlocked(context.Background(), &d, nil, blocked[1:2])
	if got := drainEvents(rec); len(got) != 0 {
		t.Fatalf("a changed message republished %v", got)
	}
	if m := d.Blocked.Nodes[0].Reasons[0].Message; !strings.Contains(m, "default/bigger") {
		t.Fatalf("status message %q", m)
	}
	for reason, want := range map[string]float64{"would_not_fit": 1, "pdb": 0, "budget": 0, "consolidate_after": 0} {
		if v := testutil.ToFloat64(a.Disruption.metrics.DisruptionBlockedNodes.WithLabelValues(reason)); v != want {
			t.Errorf("%s gauge %v, want %v", reason, v, want)
		}
	}
}

// A pod's do-not-disrupt duration blocks a drain-and-replace until it has
// run out since the pod started, and so does the drain; "true" always; an
// invalid value is ignored with a Warning Event on the pod.
func TestDoNotDisruptDurationInCandidateCheckAndDrain(t *testing.T) {
	cases := []struct {
		value   string
		age     time.Duration
		blocked bool
		event   string
	}{
		{"30m", 10 * time.Minute, true, ""},
		{"30m", 40 * time.Minute, false, ""},
		{"true", 48 * time.Hour, true, ""},
		{"soon", time.Minute, false, `Warning InvalidDoNotDisruptAnnotation Invalid karpenter.sh/do-not-disrupt annotation: failed to parse "soon" as a duration`},
	}
	for _, c := range cases {
		t.Run(c.value+"/"+c.age.String(), func(t *testing.T) {
			node, nc := testNode()
			p := pod("train", true, map[string]string{apiv1.AnnotationDoNotDisrupt: c.value})
			p.UID = "u-train"
			p.Status.StartTime = &metav1.Time{Time: time.Now().Add(-c.age)}
			a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{nc}, Objects: []runtime.Object{node, p}})
			rec := record.NewFakeRecorder(10)
			a.cluster().Recorder = rec
			got, err := a.Disruption.CheckDisruptionCandidate(context.Background(), workflows.DisruptInput{NodeName: node.Name, Reason: saga.ReasonUnderused, SkipBudgets: true})
			if err != nil {
				t.Fatal(err)
			}
			if got.OK == c.blocked {
				t.Fatalf("candidate %+v, want blocked=%v", got, c.blocked)
			}
			if c.blocked && c.value != "true" && !strings.Contains(got.Why, " until ") {
				t.Errorf("why %q does not say until when", got.Why)
			}
			st, err := a.Drain.DrainStep(context.Background(), workflows.DrainRequest{NodeName: node.Name, Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if blocked := len(st.Blocked) == 1; blocked != c.blocked || (!c.blocked && len(st.Evicted) != 1) {
				t.Fatalf("drain %+v, want blocked=%v", st, c.blocked)
			}
			evs := drainEvents(rec)
			found := c.event == ""
			for _, e := range evs {
				found = found || strings.HasPrefix(e, c.event)
			}
			if !found {
				t.Fatalf("events %v, want %q", evs, c.event)
			}
		})
	}
}
