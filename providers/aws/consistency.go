package aws

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// DefaultConsistencyWindow is how long Joinery gives EC2 to show what it
// wrote (Options.ConsistencyWindow). EC2's API is eventually consistent and
// AWS publishes no bound: an instance just launched may be unknown to
// DescribeInstances and TerminateInstances for a while. Karpenter treats a
// minute as the longest such delay it tolerates; Joinery does the same.
const DefaultConsistencyWindow = time.Minute

// ConsistencyWindow is how long after a launch an InvalidInstanceID.NotFound
// may still mean "not visible yet" rather than "gone" (a nil Client:
// DefaultConsistencyWindow).
func (c *Client) ConsistencyWindow() time.Duration {
	if c == nil {
		return DefaultConsistencyWindow
	}
	return c.opts.ConsistencyWindow
}

// Clock is the clock the client times eventual consistency by.
func (c *Client) Clock() clock.Clock {
	if c == nil {
		return clock.RealClock{}
	}
	return c.opts.Clock
}

// Termination is what TerminateLaunched found.
type Termination struct {
	// Accepted: EC2 took the termination (the instance is shutting down,
	// or already was). False: EC2 never knew the instance, within the
	// window: it is gone (or was never launched).
	Accepted bool
	// Unseen is how long EC2 answered InvalidInstanceID.NotFound first.
	Unseen time.Duration
}

// terminateBackoff is the first wait between TerminateInstances calls an
// unknown instance answers, doubled up to terminateBackoffMax (well under
// an activity's heartbeat timeout).
const (
	terminateBackoff    = time.Second
	terminateBackoffMax = 8 * time.Second
)

// TerminateLaunched terminates an instance Joinery launched at or before
// launchedBy (zero: unknown). EC2 answers InvalidInstanceID.NotFound for an
// instance it launched moments ago, while the instance runs: that is no
// proof it is gone (EC2's documentation says to confirm with
// DescribeInstances). So the call is repeated, backing off from 1 s, until
// EC2 accepts it, and NotFound is taken as "gone" only once the
// consistency window has passed since launchedBy (since the first NotFound
// when launchedBy is unknown).
func (c *Client) TerminateLaunched(ctx context.Context, id string, launchedBy time.Time) (Termination, error) {
	clk := c.opts.Clock
	var firstMiss time.Time
	wait := terminateBackoff
	for {
		_, err := c.terminations.do(ctx, id) // batched with concurrent terminations
		now := clk.Now()
		if err == nil {
			return Termination{Accepted: true, Unseen: sinceOr0(now, firstMiss)}, nil
		}
		if !IsNotFound(err) {
			return Termination{}, fmt.Errorf("TerminateInstances %s: %w", id, err)
		}
		if firstMiss.IsZero() {
			firstMiss = now
		}
		ref := launchedBy
		if ref.IsZero() || ref.After(firstMiss) {
			ref = firstMiss
		}
		left := ref.Add(c.opts.ConsistencyWindow).Sub(now)
		if left <= 0 {
			return Termination{Unseen: now.Sub(firstMiss)}, nil
		}
		select {
		case <-ctx.Done():
			return Termination{}, fmt.Errorf("instance %s still unknown to EC2 after %s: %w", id, now.Sub(firstMiss).Round(time.Second), ctx.Err())
		case <-clk.After(min(wait, left)):
		}
		wait = min(2*wait, terminateBackoffMax)
	}
}

func sinceOr0(now, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return now.Sub(t)
}
