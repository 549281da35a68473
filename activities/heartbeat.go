package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// pulse heartbeats every 2 s until stopped, so an activity made of
// several slow calls is seen alive (and one whose worker died is retried
// after the heartbeat timeout); it can also carry the activity's progress:
// the details of its last heartbeat are what the next attempt reads
// (activity.GetHeartbeatDetails), so an attempt starts with the progress
// it resumed from: a worker that dies before the first carry does not lose
// what earlier attempts did. Outside an activity it does nothing.
type pulse struct {
	ctx     context.Context
	mu      sync.Mutex
	details []interface{}
	done    chan struct{}
}

func startPulse(ctx context.Context, progress ...interface{}) *pulse {
	p := &pulse{ctx: ctx, details: progress, done: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		close(p.done)
		return p
	}
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			p.beat()
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// carry makes progress the details of this and every later heartbeat.
func (p *pulse) carry(progress ...interface{}) {
	p.mu.Lock()
	p.details = progress
	p.mu.Unlock()
	if activity.IsActivity(p.ctx) {
		p.beat()
	}
}

func (p *pulse) beat() {
	p.mu.Lock()
	d := p.details
	p.mu.Unlock()
	activity.RecordHeartbeat(p.ctx, d...)
}

func (p *pulse) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// pulsing runs f under a pulse: the planning activities compute for seconds
// without a natural point to heartbeat, and without one a worker killed
// mid-plan would hold the saga for the whole start-to-close timeout.
func pulsing[I, O any](f func(context.Context, I) (O, error)) func(context.Context, I) (O, error) {
	return func(ctx context.Context, in I) (O, error) {
		p := startPulse(ctx)
		defer p.stop()
		return f(ctx, in)
	}
}
