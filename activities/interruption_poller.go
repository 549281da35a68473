package activities

import (
	"context"
	"time"

	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
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

// InterruptionStarter starts (or joins) the Interruption workflow of one
// instance and event.
type InterruptionStarter interface {
	StartInterruption(ctx context.Context, in workflows.InterruptionInput) error
}

// InterruptionPoller is the PollInterruptionQueue activity: it long-polls
// the interruption queue, heartbeating, parses each message and starts one
// Interruption workflow per instance; a message is deleted only once its
// workflows have started (or when it cannot be parsed, or asks for
// nothing: then it is logged and counted). A message whose workflow could
// not be started stays on the queue and comes back after its visibility
// timeout.
type InterruptionPoller struct {
	Queue   InterruptionQueue // nil: no queue configured on this worker
	Starter InterruptionStarter
	Metrics *metrics.Metrics
	Log     *zap.Logger
	// DrainOnRebalance treats rebalance recommendations like spot warnings.
	DrainOnRebalance bool
	// WaitSeconds is the long-poll wait (default 5, at most 20).
	WaitSeconds int32
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
		for _, m := range msgs {
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
	for _, id := range msg.InstanceIDs {
		in := workflows.InterruptionInput{
			EventID: msg.EventID, Kind: msg.Kind, InstanceID: id, Time: msg.Time, NoticeEnd: msg.NoticeEnd,
			State: msg.State, Action: msg.Action, DrainOnRebalance: p.DrainOnRebalance, MessageID: m.ID,
		}
		if err := p.Starter.StartInterruption(ctx, in); err != nil {
			res.Failed++
			log.Error("could not start the interruption workflow; the message stays on the queue", zap.String("instance", id),
				zap.String("event", msg.EventID), zap.Error(err))
			return
		}
		log.Info("interruption workflow started", zap.String("kind", msg.Kind), zap.String("instance", id),
			zap.String("workflow", workflows.InterruptionWorkflowID(id, msg.EventID)))
	}
	res.Started += len(msg.InstanceIDs)
	p.delete(ctx, log, m)
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
// Temporal client. A running workflow of the same id is joined and a
// closed one is not run again, so a redelivered message never acts twice.
// With Pseudonym set (payload encryption on) the workflow is Private and
// its id holds the instance id's pseudonym instead of the instance id.
type TemporalInterruptionStarter struct {
	Client    client.Client
	Pseudonym func(string) string
}

// StartInterruption starts the workflow interruption/<instance>/<event>.
func (s TemporalInterruptionStarter) StartInterruption(ctx context.Context, in workflows.InterruptionInput) error {
	ref := in.InstanceID
	sas := []temporal.SearchAttributeUpdate{workflows.SAPhase.ValueSet(workflows.PhaseChecking)}
	if s.Pseudonym != nil {
		in.Private, ref = true, s.Pseudonym(in.InstanceID)
	} else {
		sas = append(sas, workflows.SAInstanceID.ValueSet(in.InstanceID))
	}
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.InterruptionWorkflowID(ref, in.EventID), TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sas...),
	}, workflows.InterruptionWorkflow, in)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil // handled before: the message is a duplicate
	}
	return err
}
