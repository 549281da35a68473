package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeInterruption scripts the Interruption workflow's own activities and
// records, in order, what it did ("ice", "note:<action>", "child", "terminate").
type fakeInterruption struct {
	target InterruptionTarget
	steps  []string
	ice    []saga.Offering
	notes  []InterruptionNote
	child  []DisruptInput
	term   []TerminateRequest
}

func (f *fakeInterruption) register(env *testsuite.TestWorkflowEnvironment, mockChild bool) {
	reg := func(fn interface{}, name string) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	reg(func(_ context.Context, id string) (InterruptionTarget, error) { return f.target, nil }, ActivityLookupInterruptedInstance)
	reg(func(_ context.Context, o saga.Offering) error {
		f.steps = append(f.steps, "ice")
		f.ice = append(f.ice, o)
		return nil
	}, ActivityMarkOfferingUnavailable)
	reg(func(_ context.Context, n InterruptionNote) error {
		f.steps = append(f.steps, "note:"+n.Action)
		f.notes = append(f.notes, n)
		return nil
	}, ActivityRecordInterruption)
	env.RegisterWorkflowWithOptions(Interruption, workflow.RegisterOptions{Name: InterruptionWorkflow})
	if mockChild {
		reg(func(_ context.Context, r TerminateRequest) error {
			f.steps = append(f.steps, "terminate")
			f.term = append(f.term, r)
			return nil
		}, ActivityTerminateInstance)
		env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
		env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(
			func(_ workflow.Context, in DisruptInput) (DisruptResult, error) {
				f.steps = append(f.steps, "child")
				f.child = append(f.child, in)
				return DisruptResult{Outcome: PhaseDone, Replacements: []string{"general-purpose-repl1"}, Evicted: 2}, nil
			})
	}
}

func spotTarget() InterruptionTarget {
	return InterruptionTarget{NodeClaim: "general-purpose-abcde", NodeName: "ip-10-0-0-4.ec2.internal", NodePool: "general-purpose",
		InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}
}

func runInterruption(t *testing.T, f *fakeInterruption, in InterruptionInput) InterruptionResult {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env, true)
	env.ExecuteWorkflow(InterruptionWorkflow, in)
	var res InterruptionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func equalSteps(a []string, b ...string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A spot warning marks the (type, zone, spot) pool unavailable before the
// drain-and-replace (which plans the replacement) starts, and hands it the
// end of the 2-minute notice as the drain deadline.
func TestInterruptionSpotWarningMarksThePoolThenDrains(t *testing.T) {
	at := time.Date(2026, 8, 20, 10, 5, 0, 0, time.UTC)
	f := &fakeInterruption{target: spotTarget()}
	res := runInterruption(t, f, InterruptionInput{EventID: "e1", Kind: saga.KindSpotInterrupted, InstanceID: "i-0123456789abcdef0",
		Time: at, NoticeEnd: at.Add(2 * time.Minute), Action: "terminate"})
	if !equalSteps(f.steps, "ice", "note:"+ActionCordonAndDrain, "child") {
		t.Fatalf("steps %v", f.steps)
	}
	if f.ice[0] != (saga.Offering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}) {
		t.Errorf("marked %+v", f.ice[0])
	}
	c := f.child[0]
	if c.NodeName != "ip-10-0-0-4.ec2.internal" || c.Reason != saga.ReasonInterruption || !c.Replace || !c.Interruption || !c.SkipBudgets ||
		!c.Deadline.Equal(at.Add(2*time.Minute)) {
		t.Errorf("child input %+v", c)
	}
	if res.Action != ActionCordonAndDrain || res.Outcome != PhaseDone || res.Disrupt == nil || res.Disrupt.Evicted != 2 ||
		res.NodeClaim != "general-purpose-abcde" {
		t.Errorf("result %+v", res)
	}
	if n := f.notes[0]; n.NodeName != c.NodeName || n.Kind != saga.KindSpotInterrupted || n.EventID != "e1" {
		t.Errorf("note %+v", n)
	}
}

func TestInterruptionScheduledChangeDrainsBeforeTheMaintenance(t *testing.T) {
	start := time.Date(2026, 9, 3, 2, 0, 0, 0, time.UTC)
	f := &fakeInterruption{target: spotTarget()}
	f.target.CapacityType = "on-demand"
	res := runInterruption(t, f, InterruptionInput{EventID: "h1", Kind: saga.KindScheduledChange, InstanceID: "i-0123456789abcdef1",
		Time: start.Add(-14 * 24 * time.Hour), NoticeEnd: start})
	if !equalSteps(f.steps, "note:"+ActionCordonAndDrain, "child") || len(f.ice) != 0 {
		t.Fatalf("steps %v ice %v", f.steps, f.ice)
	}
	if !f.child[0].Deadline.Equal(start) || !f.child[0].Interruption {
		t.Errorf("child input %+v", f.child[0])
	}
	if res.Outcome != PhaseDone || res.Action != ActionCordonAndDrain {
		t.Errorf("result %+v", res)
	}
}

func TestInterruptionStateChanges(t *testing.T) {
	at := time.Date(2026, 8, 20, 10, 7, 0, 0, time.UTC)
	for _, c := range []struct{ kind, state string }{
		{saga.KindInstanceStopped, "stopping"}, {saga.KindInstanceStopped, "stopped"},
		{saga.KindInstanceTerminated, "shutting-down"}, {saga.KindInstanceTerminated, "terminated"},
	} {
		f := &fakeInterruption{target: spotTarget()}
		res := runInterruption(t, f, InterruptionInput{EventID: "s-" + c.state, Kind: c.kind, State: c.state, InstanceID: "i-0123456789abcdef0",
			Time: at, NoticeEnd: at})
		// Already going: the deadline is now, so whatever is left is deleted
		// at once and the Node and NodeClaim are cleaned up.
		if !equalSteps(f.steps, "note:"+ActionCordonAndDrain, "child") || len(f.ice) != 0 || !f.child[0].Deadline.Equal(at) {
			t.Errorf("%s: steps %v ice %v child %+v", c.state, f.steps, f.ice, f.child)
		}
		if res.Outcome != PhaseDone {
			t.Errorf("%s: result %+v", c.state, res)
		}
	}
}

// A rebalance recommendation only informs by default; with the opt-in it
// is handled like a spot warning.
func TestInterruptionRebalanceRecommendation(t *testing.T) {
	f := &fakeInterruption{target: spotTarget()}
	res := runInterruption(t, f, InterruptionInput{EventID: "r1", Kind: saga.KindRebalanceRecommendation, InstanceID: "i-0123456789abcdef0"})
	if !equalSteps(f.steps, "note:"+ActionNoAction) || res.Action != ActionNoAction || res.Outcome != PhaseDone || res.Disrupt != nil {
		t.Fatalf("default: steps %v result %+v", f.steps, res)
	}
	f = &fakeInterruption{target: spotTarget()}
	res = runInterruption(t, f, InterruptionInput{EventID: "r2", Kind: saga.KindRebalanceRecommendation, InstanceID: "i-0123456789abcdef0", DrainOnRebalance: true})
	if !equalSteps(f.steps, "ice", "note:"+ActionCordonAndDrain, "child") || res.Action != ActionCordonAndDrain || !f.child[0].Deadline.IsZero() {
		t.Fatalf("opt-in: steps %v result %+v child %+v", f.steps, res, f.child)
	}
}

func TestInterruptionSkips(t *testing.T) {
	// Not a Joinery instance.
	f := &fakeInterruption{}
	res := runInterruption(t, f, InterruptionInput{EventID: "x", Kind: saga.KindSpotInterrupted, InstanceID: "i-0123456789abcdef9"})
	if !equalSteps(f.steps, "note:"+ActionNoAction) || res.Outcome != PhaseSkipped || res.Action != ActionNoAction {
		t.Errorf("unknown instance: steps %v result %+v", f.steps, res)
	}
	// A drain already under way (e.g. the spot warning's, when the state
	// change to shutting-down arrives) is not started twice.
	f = &fakeInterruption{target: spotTarget()}
	f.target.DisruptingFor = "disrupting: interruption"
	res = runInterruption(t, f, InterruptionInput{EventID: "y", Kind: saga.KindInstanceTerminated, State: "shutting-down", InstanceID: "i-0123456789abcdef0"})
	if !equalSteps(f.steps, "note:"+ActionNoAction) || res.Outcome != PhaseSkipped || len(f.child) != 0 {
		t.Errorf("already disrupting: steps %v result %+v", f.steps, res)
	}
}

// An instance interrupted before its Node registered: its NodeClaim is
// terminated (its pods are provisioned again), no drain.
func TestInterruptionWithoutANodeTerminatesTheNodeClaim(t *testing.T) {
	f := &fakeInterruption{target: spotTarget()}
	f.target.NodeName = ""
	res := runInterruption(t, f, InterruptionInput{EventID: "z", Kind: saga.KindSpotInterrupted, InstanceID: "i-0123456789abcdef0"})
	if !equalSteps(f.steps, "ice", "note:"+ActionTerminate, "terminate") || res.Action != ActionTerminate || res.Outcome != PhaseDone {
		t.Fatalf("steps %v result %+v", f.steps, res)
	}
	if f.term[0].NodeClaim != "general-purpose-abcde" || f.term[0].InstanceID != "i-0123456789abcdef0" {
		t.Errorf("terminate %+v", f.term[0])
	}
}

// The whole response with the real DrainAndReplace child: do-not-disrupt
// pods are evicted, the deadline is the notice's end (earlier than the
// NodeClaim's 4 h termination grace period), and the old node ends through its NodeClaim workflow.
func TestInterruptionRunsTheDrainAndReplaceSaga(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	cand := candidate()
	cand.TerminationGracePeriod = 4 * time.Hour
	d := &fakeDrain{cand: cand, replacementOK: true,
		replacements: []NodeClaimInput{{Name: "general-purpose-repl1", NodePool: "general-purpose", Offerings: offerings()}},
		drain: func(i int, r DrainRequest) DrainStatus {
			if i == 0 {
				return DrainStatus{Remaining: 2, Tier: 1, Evicted: []string{"default/job-x", "default/rs-y"}}
			}
			return DrainStatus{}
		}}
	f := &fakeInterruption{target: spotTarget()}
	f.register(env, false)
	d.register(env)
	notice := env.Now().Add(2 * time.Minute)
	env.ExecuteWorkflow(InterruptionWorkflow, InterruptionInput{EventID: "e1", Kind: saga.KindSpotInterrupted, InstanceID: "i-1",
		Time: env.Now(), NoticeEnd: notice, Action: "terminate"})
	var res InterruptionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Disrupt == nil || res.Disrupt.Outcome != PhaseDone || res.Disrupt.Evicted != 2 || len(res.Disrupt.Replacements) != 1 {
		t.Fatalf("result %+v (%+v)", res, res.Disrupt)
	}
	if len(d.drains) == 0 || !d.drains[0].EvictDoNotDisrupt || !d.drains[0].Deadline.Equal(notice) {
		t.Fatalf("drain requests %+v, want do-not-disrupt evicted and deadline %s", d.drains, notice)
	}
	if len(d.taints) != 1 || d.taints[0].Reason != saga.ReasonInterruption {
		t.Errorf("taints %+v", d.taints)
	}
	if len(d.signals) != 1 || d.signals[0] != NodeClaimWorkflowID(cand.NodeClaim) || d.gone != 1 {
		t.Errorf("old node: signals %v gone %d", d.signals, d.gone)
	}
}

// A spot warning that finds the node's interruption drain already running
// (a rebalance recommendation's, with rebalance drains on) starts no
// second one.
func TestInterruptionFindsTheDrainRunning(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	logs := &recordingLogger{}
	s.SetLogger(logs)
	env := s.NewTestWorkflowEnvironment()
	f := &fakeInterruption{target: spotTarget()}
	f.register(env, false)
	env.RegisterWorkflowWithOptions(DrainAndReplace, workflow.RegisterOptions{Name: DrainAndReplaceWorkflow})
	env.OnWorkflow(DrainAndReplaceWorkflow, mock.Anything, mock.Anything).Return(DisruptResult{}, &temporal.ChildWorkflowExecutionAlreadyStartedError{})
	env.ExecuteWorkflow(InterruptionWorkflow, InterruptionInput{EventID: "e2", Kind: saga.KindSpotInterrupted, InstanceID: "i-0abc", Action: "terminate",
		NoticeEnd: env.Now().Add(2 * time.Minute)})
	var res InterruptionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PhaseSkipped || res.Disrupt != nil {
		t.Fatalf("outcome %s (%s), disrupt %+v", res.Outcome, res.Why, res.Disrupt)
	}
	// The test environment holds the mocked child as ended, so the signal
	// it is sent fails: that the failure is logged for the child's id
	// shows it was sent there (TestNoticeRunningDrain checks its payload).
	if !logs.has("could not be told the notice end", DisruptWorkflowID(saga.ReasonInterruption, spotTarget().NodeName)) {
		t.Errorf("no notice end sent to the running drain; logs: %v", logs.lines)
	}
}

// recordingLogger keeps the test environment's log lines.
type recordingLogger struct{ lines []string }

func (l *recordingLogger) add(msg string, kv []interface{}) {
	l.lines = append(l.lines, fmt.Sprint(append([]interface{}{msg}, kv...)...))
}
func (l *recordingLogger) Debug(msg string, kv ...interface{}) {}
func (l *recordingLogger) Info(msg string, kv ...interface{})  { l.add(msg, kv) }
func (l *recordingLogger) Warn(msg string, kv ...interface{})  { l.add(msg, kv) }
func (l *recordingLogger) Error(msg string, kv ...interface{}) { l.add(msg, kv) }

// has reports whether one line holds every part.
func (l *recordingLogger) has(parts ...string) bool {
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// noticeRunningDrain signals the running drain the notice end (version 1),
// and nothing for an event without one.
func TestNoticeRunningDrain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		end   bool
		wantN int
	}{{"with a notice end", true, 1}, {"without", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in InterruptionInput) error {
				noticeRunningDrain(ctx, "disrupt/interruption/n1", in)
				return nil
			}, workflow.RegisterOptions{Name: "notice-test"})
			var ids []string
			var notices []NoticeEnd
			env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalNoticeEnd, mock.Anything).Return(
				func(_, id, _, _ string, arg interface{}) error {
					ids = append(ids, id)
					notices = append(notices, arg.(NoticeEnd))
					return nil
				})
			in := InterruptionInput{Kind: saga.KindSpotInterrupted, InstanceID: "i-0abc"}
			if tc.end {
				in.NoticeEnd = env.Now().Add(2 * time.Minute)
			}
			env.ExecuteWorkflow("notice-test", in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if len(ids) != tc.wantN || (tc.wantN == 1 && (ids[0] != "disrupt/interruption/n1" || !notices[0].Deadline.Equal(in.NoticeEnd) || notices[0].Kind != in.Kind)) {
				t.Fatalf("signalled %v with %+v", ids, notices)
			}
		})
	}
}
