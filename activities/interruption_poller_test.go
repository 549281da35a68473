package activities

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"
)

// fakeQueue hands out its messages once, records deletions and, as the
// starter, starts each workflow id once as Temporal does; log holds
// "start:<workflow id>:<kind>" and "delete:<message id>" in order.
type fakeQueue struct {
	mu       sync.Mutex
	pending  []aws.QueueMessage
	log      []string
	startErr map[string]error // by instance id
	started  map[string]bool  // workflow ids
}

func (q *fakeQueue) Receive(ctx context.Context, max, wait int32) ([]aws.QueueMessage, error) {
	q.mu.Lock()
	out := q.pending
	q.pending = nil
	q.mu.Unlock()
	if len(out) == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out, nil
}

func (q *fakeQueue) Delete(_ context.Context, h string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.log = append(q.log, "delete:"+strings.TrimSuffix(h, "#rh"))
	return nil
}

func (q *fakeQueue) StartInterruption(_ context.Context, in workflows.InterruptionInput) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.startErr[in.InstanceID]; err != nil {
		return false, err
	}
	id := workflows.InterruptionWorkflowID(in.InstanceID, in.Kind)
	if q.started[id] {
		return false, nil
	}
	if q.started == nil {
		q.started = map[string]bool{}
	}
	q.started[id] = true
	q.log = append(q.log, "start:"+id+":"+in.EventID)
	return true, nil
}

func (q *fakeQueue) InterruptionStarted(_ context.Context, instanceID, kind string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.started[workflows.InterruptionWorkflowID(instanceID, kind)], nil
}

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../providers/aws/interruption/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func msg(id, body string) aws.QueueMessage {
	return aws.QueueMessage{ID: id, ReceiptHandle: id + "#rh", Body: body, ReceiveCount: 1}
}

func TestPollerStartsThenDeletesAndCountsEveryKind(t *testing.T) {
	q := &fakeQueue{startErr: map[string]error{}}
	m := metrics.New()
	p := &InterruptionPoller{Queue: q, Starter: q, Metrics: m, Log: zap.NewNop(), DrainOnRebalance: true}
	health := strings.Replace(sample(t, "health-scheduled-change.json"), `"entityValue": "i-0123456789abcdef1",`,
		`"entityValue": "i-0123456789abcdef1"}, {"entityValue": "arn:aws:ec2:us-east-1:111122223333:instance/i-0123456789abcdef2",`, 1)
	var res workflows.PollResult
	for _, mm := range []aws.QueueMessage{
		msg("m1", sample(t, "spot-interruption-warning.json")),
		msg("m2", sample(t, "rebalance-recommendation.json")),
		msg("m3", health),
		msg("m4", sample(t, "instance-state-change.json")),
		msg("m5", `{"version":"0","id":"u","source":"aws.s3","detail-type":"Object Created","detail":{}}`),
		msg("m6", `not json at all`),
	} {
		p.Handle(context.Background(), mm, &res)
	}
	// The rebalance recommendation comes after the spot warning for the
	// same instance: superseded, deleted, nothing started.
	want := []string{
		"start:interruption/i-0123456789abcdef0/spot_interrupted:11111111-2222-3333-4444-555555555501", "delete:m1",
		"delete:m2",
		"start:interruption/i-0123456789abcdef1/scheduled_change:11111111-2222-3333-4444-555555555503",
		"start:interruption/i-0123456789abcdef2/scheduled_change:11111111-2222-3333-4444-555555555503", "delete:m3",
		"start:interruption/i-0123456789abcdef0/instance_terminated:11111111-2222-3333-4444-555555555504", "delete:m4",
		"delete:m5", "delete:m6",
	}
	if strings.Join(q.log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(q.log, "\n"), strings.Join(want, "\n"))
	}
	if res != (workflows.PollResult{Received: 6, Started: 4, Superseded: 1, Ignored: 1, Unparsable: 1}) {
		t.Errorf("result %+v", res)
	}
	for kind, n := range map[string]float64{"spot_interrupted": 1, "rebalance_recommendation": 1, "scheduled_change": 1,
		"instance_terminated": 1, "unknown": 1, "unparsable": 1} {
		if got := testutil.ToFloat64(m.InterruptionReceived.WithLabelValues(kind)); got != n {
			t.Errorf("received{kind=%s} = %v, want %v", kind, got, n)
		}
	}
}

// A message whose workflow cannot be started is not deleted: SQS delivers
// it again after the visibility timeout.
func TestPollerKeepsAMessageItCouldNotHandOver(t *testing.T) {
	q := &fakeQueue{startErr: map[string]error{"i-0123456789abcdef0": errors.New("temporal unavailable")}}
	p := &InterruptionPoller{Queue: q, Starter: q, Log: zap.NewNop()}
	var res workflows.PollResult
	p.Handle(context.Background(), msg("m1", sample(t, "spot-interruption-warning.json")), &res)
	if len(q.log) != 0 || res.Failed != 1 || res.Started != 0 {
		t.Fatalf("log %v result %+v", q.log, res)
	}
}

// The activity runs for RunFor, then returns what it did; a worker without
// a queue fails it for good.
func TestPollActivity(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	q := &fakeQueue{startErr: map[string]error{}, pending: []aws.QueueMessage{msg("m1", sample(t, "spot-interruption-warning.json"))}}
	p := &InterruptionPoller{Queue: q, Starter: q, Log: zap.NewNop()}
	p.Register(env)
	start := time.Now()
	v, err := env.ExecuteActivity(workflows.ActivityPollInterruptionQueue, workflows.PollerInput{RunFor: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.PollResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	if res.Received != 1 || res.Started != 1 || time.Since(start) < 300*time.Millisecond {
		t.Errorf("result %+v after %s", res, time.Since(start))
	}

	env2 := s.NewTestActivityEnvironment()
	(&InterruptionPoller{Log: zap.NewNop()}).Register(env2)
	_, err = env2.ExecuteActivity(workflows.ActivityPollInterruptionQueue, workflows.PollerInput{})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.ErrNoInterruptionQueue || !app.NonRetryable() {
		t.Fatalf("without a queue: %v", err)
	}
}
