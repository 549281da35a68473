package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"
)

func pollerOn(q *fakeQueue) *InterruptionPoller {
	return &InterruptionPoller{Queue: q, Starter: q, Log: zap.NewNop()}
}

func handleAll(p *InterruptionPoller, msgs ...aws.QueueMessage) workflows.PollResult {
	var res workflows.PollResult
	for _, m := range msgs {
		p.Handle(context.Background(), m, &res)
	}
	return res
}

func logIs(t *testing.T, q *fakeQueue, want ...string) {
	t.Helper()
	if got := strings.Join(q.log, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

const spotWorkflow = "start:interruption/i-0123456789abcdef0/spot_interrupted:11111111-2222-3333-4444-555555555501"

// A standard queue delivers the spot warning three times: a second copy of
// the message (same id, its own receipt handle) and the event sent again
// (a new message). It acts once; every copy is deleted.
func TestPollerActsOnceOnDuplicates(t *testing.T) {
	q := &fakeQueue{}
	spot := sample(t, "spot-interruption-warning.json")
	copy2 := msg("m1", spot)
	copy2.ReceiptHandle = "m1-copy#rh"
	res := handleAll(pollerOn(q), msg("m1", spot), copy2, msg("m9", spot))
	logIs(t, q, spotWorkflow, "delete:m1", "delete:m1-copy", "delete:m9")
	if res != (workflows.PollResult{Received: 3, Started: 1, Duplicates: 2}) {
		t.Errorf("result %+v", res)
	}
}

// The rebalance recommendation (10:00) arrives after the spot warning
// (10:05) for the same instance was handled: it does not act, not even
// after a restart of the poller (Temporal remembers what it started).
// The spot warning delivered again after the restart acts no more either.
func TestPollerLateOlderEventDoesNotUndoTheNewer(t *testing.T) {
	q := &fakeQueue{}
	spot, rebalance := sample(t, "spot-interruption-warning.json"), sample(t, "rebalance-recommendation.json")
	res := handleAll(pollerOn(q), msg("m1", spot), msg("m2", rebalance))
	if res.Started != 1 || res.Superseded != 1 {
		t.Errorf("first poller: %+v", res)
	}
	restarted := handleAll(pollerOn(q), msg("m3", rebalance), msg("m4", spot))
	logIs(t, q, spotWorkflow, "delete:m1", "delete:m2", "delete:m3", "delete:m4")
	if restarted != (workflows.PollResult{Received: 2, Superseded: 1, Duplicates: 1}) {
		t.Errorf("after a restart: %+v", restarted)
	}
}

// Handling only escalates: a rebalance recommendation handled first, then
// the spot warning for the same instance acts too.
func TestPollerEscalates(t *testing.T) {
	q := &fakeQueue{}
	res := handleAll(pollerOn(q), msg("m2", sample(t, "rebalance-recommendation.json")), msg("m1", sample(t, "spot-interruption-warning.json")))
	logIs(t, q, "start:interruption/i-0123456789abcdef0/rebalance_recommendation:11111111-2222-3333-4444-555555555502", "delete:m2",
		spotWorkflow, "delete:m1")
	if res.Started != 2 {
		t.Errorf("result %+v", res)
	}
}

// Received together, out of order, the two events act as the spot warning.
func TestPollerBatchStrongestFirst(t *testing.T) {
	q := &fakeQueue{pending: []aws.QueueMessage{msg("m2", sample(t, "rebalance-recommendation.json")), msg("m1", sample(t, "spot-interruption-warning.json"))}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	pollerOn(q).Register(env)
	v, err := env.ExecuteActivity(workflows.ActivityPollInterruptionQueue, workflows.PollerInput{RunFor: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.PollResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	logIs(t, q, spotWorkflow, "delete:m1", "delete:m2")
	if res.Started != 1 || res.Superseded != 1 {
		t.Errorf("result %+v", res)
	}
}

// The poller forgets what it handled after recentFor (Temporal still
// knows).
func TestRecentEventsForget(t *testing.T) {
	now := time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
	r := recentEvents{now: func() time.Time { return now }}
	r.add("i-1/spot_interrupted")
	if !r.has("i-1/spot_interrupted") || r.has("i-1/rebalance_recommendation") {
		t.Fatal("remembered the wrong thing")
	}
	now = now.Add(recentFor)
	if r.has("i-1/spot_interrupted") {
		t.Fatal("remembered past recentFor")
	}
}
