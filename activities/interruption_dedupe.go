package activities

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/workflows"
)

// recentFor is how long the poller remembers what it handled.
const recentFor = 15 * time.Minute

// recentEvents remembers, for recentFor, the messages and instance events
// (instance/kind) this poller handled, so an SQS duplicate is dropped
// without asking Temporal; Temporal's workflow ids remain the guard across
// workers and restarts. The zero value is ready.
type recentEvents struct {
	mu  sync.Mutex
	at  map[string]time.Time
	now func() time.Time // nil: time.Now
}

func (r *recentEvents) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

func (r *recentEvents) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[key]
	return ok && r.clock().Sub(t) < recentFor
}

func (r *recentEvents) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	if r.at == nil {
		r.at = map[string]time.Time{}
	}
	if len(r.at) >= 1024 { // forget what is past recentFor
		for k, t := range r.at {
			if now.Sub(t) >= recentFor {
				delete(r.at, k)
			}
		}
	}
	r.at[key] = now
}

// strongestFirst orders a received batch by what its events ask
// (workflows.InterruptionSeverity), strongest first, keeping the queue's
// order among equals: a spot warning and a rebalance recommendation for
// one instance received together act as the spot warning.
func strongestFirst(msgs []aws.QueueMessage) []aws.QueueMessage {
	sev := make(map[string]int, len(msgs))
	for _, m := range msgs {
		if msg, err := interruption.Parse([]byte(m.Body)); err == nil {
			sev[m.ReceiptHandle] = workflows.InterruptionSeverity(msg.Kind)
		}
	}
	out := slices.Clone(msgs)
	slices.SortStableFunc(out, func(a, b aws.QueueMessage) int { return cmp.Compare(sev[b.ReceiptHandle], sev[a.ReceiptHandle]) })
	return out
}
