package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
)

// InterruptionQueue is the part of cloud.Queue the poller uses.
type InterruptionQueue interface {
	Receive(ctx context.Context, max, waitSeconds int32) ([]aws.QueueMessage, error)
	Delete(ctx context.Context, receiptHandle string) error
}

// InterruptionStarter starts the Interruption workflow of one instance and
// kind of event, and tells which were started before.
type InterruptionStarter interface {
	// StartInterruption starts it; started is false when the instance's
	// workflow of that kind exists already, running or closed: the event
	// was handled.
	StartInterruption(ctx context.Context, in workflows.InterruptionInput) (started bool, err error)
	// InterruptionStarted reports whether the instance's workflow of the
	// kind exists, running or closed.
	InterruptionStarted(ctx context.Context, instanceID, kind string) (bool, error)
}

// InterruptionPoller is the PollInterruptionQueue activity: it long-polls
// the interruption queue, heartbeating, parses each message and starts one
// Interruption workflow per instance; a message is deleted only once its
// workflows have started (or when it cannot be parsed, or asks for
// nothing: then it is logged and counted). A message whose workflow could
// not be started stays on the queue and comes back after its visibility
// timeout. The queue is a standard SQS queue: a message may come twice and
// out of order. Each instance event acts once (one workflow per instance
// and kind), and one a stronger event for the same instance was handled
// before acts no more (workflows.SupersedingKinds); a batch is handled
// strongest first.
type InterruptionPoller struct {
	Queue   InterruptionQueue // nil: no queue configured on this worker
	Starter InterruptionStarter
	Metrics *metrics.Metrics
	Log     *zap.Logger
	// DrainOnRebalance treats rebalance recommendations like spot warnings.
	DrainOnRebalance bool
	// WaitSeconds is the long-poll wait (default 5, at most 20).
	WaitSeconds int32

	recent recentEvents // what this poller handled lately
}

// Register registers the poll activity.
func (p *InterruptionPoller) Register(w worker.ActivityRegistry) {
	w.RegisterActivityWithOptions(p.PollInterruptionQueue, activity.RegisterOptions{Name: workflows.ActivityPollInterruptionQueue})
}

// PollInterruptionQueue polls for in.RunFor (default 5 min), then returns
// what it did so the poller workflow can start the next run.
func (p *InterruptionPoller) PollInterruptionQueue(ctx context.Context, in workflows.PollerInput) (workflows.PollResult, error) {
	var res workflows.PollResult
	if p.Queue == nil {
		return res, temporal.NewNonRetryableApplicationError("no interruption queue is configured on this worker (--interruption-queue)",
			workflows.ErrNoInterruptionQueue, nil)
	}
	runFor := in.RunFor
	if runFor <= 0 {
		runFor = 5 * time.Minute
	}
	wait := p.WaitSeconds
	if wait <= 0 {
		wait = 5
	}
	end := time.Now().Add(runFor)
	for time.Now().Before(end) {
		activity.RecordHeartbeat(ctx, res)
		msgs, err := p.Queue.Receive(ctx, 10, min(wait, 20))
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			p.Log.Warn("interruption queue receive failed", zap.Error(err))
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		for _, m := range strongestFirst(msgs) {
			p.Handle(ctx, m, &res)
			activity.RecordHeartbeat(ctx, res)
		}
	}
	return res, nil
}

// Handle processes one message and adds what it did to res.
func (p *InterruptionPoller) Handle(ctx context.Context, m aws.QueueMessage, res *workflows.PollResult) {
	res.Received++
	log := p.Log.With(zap.String("messageId", m.ID), zap.Int("receiveCount", m.ReceiveCount))
	msg, err := interruption.Parse([]byte(m.Body))
	kind := msg.Kind
	if err != nil {
		kind = interruption.KindUnparsable
	}
	p.Metrics.InterruptionDequeued(kind, msg.Time, time.Now())
	switch {
	case err != nil:
		res.Unparsable++
		body := m.Body
		if len(body) > 512 {
			body = body[:512] + "..."
		}
		log.Error("unparsable interruption message deleted", zap.Error(err), zap.String("body", body))
		p.delete(ctx, log, m)
		return
	case kind == interruption.KindUnknown || kind == interruption.KindNoOp:
		res.Ignored++
		log.Info("interruption message ignored", zap.String("kind", kind), zap.String("why", msg.Why), zap.String("event", msg.EventID))
		p.delete(ctx, log, m)
		return
	}
	if p.recent.has("message/" + m.ID) {
		res.Duplicates += len(msg.InstanceIDs)
		log.Info("interruption message delivered again; handled already", zap.String("event", msg.EventID))
		p.delete(ctx, log, m)
		return
	}
	for _, id := range msg.InstanceIDs {
		in := workflows.InterruptionInput{
			EventID: msg.EventID, Kind: msg.Kind, InstanceID: id, Time: msg.Time, NoticeEnd: msg.NoticeEnd,
			State: msg.State, Action: msg.Action, DrainOnRebalance: p.DrainOnRebalance, MessageID: m.ID,
		}
		if err := p.handOver(ctx, log, in, res); err != nil {
			res.Failed++
			log.Error("could not start the interruption workflow; the message stays on the queue", zap.String("instance", id),
				zap.String("event", msg.EventID), zap.Error(err))
			return
		}
	}
	p.recent.add("message/" + m.ID)
	p.delete(ctx, log, m)
}

// handOver starts the workflow of one instance event, unless the instance
// had an event of that kind or a stronger one handled already.
func (p *InterruptionPoller) handOver(ctx context.Context, log *zap.Logger, in workflows.InterruptionInput, res *workflows.PollResult) error {
	key := in.InstanceID + "/" + in.Kind
	log = log.With(zap.String("kind", in.Kind), zap.String("instance", in.InstanceID), zap.String("event", in.EventID))
	if p.recent.has(key) {
		res.Duplicates++
		log.Info("interruption event handled already")
		return nil
	}
	by, err := p.supersededBy(ctx, in)
	if err != nil {
		return err
	}
	if by != "" {
		res.Superseded++
		p.recent.add(key)
		log.Info("interruption event superseded: a stronger one for the instance was handled", zap.String("by", by))
		return nil
	}
	started, err := p.Starter.StartInterruption(ctx, in)
	if err != nil {
		return err
	}
	p.recent.add(key)
	if !started {
		res.Duplicates++
		log.Info("interruption event handled already")
		return nil
	}
	res.Started++
	log.Info("interruption workflow started", zap.String("workflow", workflows.InterruptionWorkflowID(in.InstanceID, in.Kind)))
	return nil
}

// supersededBy is the kind of a stronger event handled for the instance
// ("" if none), from this poller's memory or from Temporal.
func (p *InterruptionPoller) supersededBy(ctx context.Context, in workflows.InterruptionInput) (string, error) {
	kinds := workflows.SupersedingKinds(in.Kind)
	for _, k := range kinds {
		if p.recent.has(in.InstanceID + "/" + k) {
			return k, nil
		}
	}
	for _, k := range kinds {
		ok, err := p.Starter.InterruptionStarted(ctx, in.InstanceID, k)
		if err != nil {
			return "", fmt.Errorf("look up the %s workflow of %s: %w", k, in.InstanceID, err)
		}
		if ok {
			return k, nil
		}
	}
	return "", nil
}

func (p *InterruptionPoller) delete(ctx context.Context, log *zap.Logger, m aws.QueueMessage) {
	if err := p.Queue.Delete(ctx, m.ReceiptHandle); err != nil {
		// Redelivered later; its workflow id makes that a no-op.
		log.Warn("interruption message not deleted", zap.Error(err))
		return
	}
	p.Metrics.InterruptionMessageDeleted()
}

// TemporalInterruptionStarter starts Interruption workflows with a
// Temporal client. A workflow id (instance and kind) that exists, running
// or closed, is not started again, so a redelivered message never acts
// twice. With Pseudonym set (payload encryption on) the workflow is
// Private and its id holds the instance id's pseudonym instead of the
// instance id.
type TemporalInterruptionStarter struct {
	Client    client.Client
	Pseudonym func(string) string
}

// ref is how workflow ids name the instance.
func (s TemporalInterruptionStarter) ref(instanceID string) string {
	if s.Pseudonym != nil {
		return s.Pseudonym(instanceID)
	}
	return instanceID
}

// StartInterruption starts the workflow interruption/<instance>/<kind>.
func (s TemporalInterruptionStarter) StartInterruption(ctx context.Context, in workflows.InterruptionInput) (bool, error) {
	sas := []temporal.SearchAttributeUpdate{workflows.SAPhase.ValueSet(workflows.PhaseChecking)}
	if s.Pseudonym != nil {
		in.Private = true
	} else {
		sas = append(sas, workflows.SAInstanceID.ValueSet(in.InstanceID))
	}
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.InterruptionWorkflowID(s.ref(in.InstanceID), in.Kind), TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sas...),
	}, workflows.InterruptionWorkflow, in)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return false, nil // handled before: the event is a duplicate
	}
	return err == nil, err
}

// InterruptionStarted reports whether interruption/<instance>/<kind> exists.
func (s TemporalInterruptionStarter) InterruptionStarted(ctx context.Context, instanceID, kind string) (bool, error) {
	_, err := s.Client.DescribeWorkflowExecution(ctx, workflows.InterruptionWorkflowID(s.ref(instanceID), kind), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	return err == nil, err
}
