package sqs

import (
	"math/rand/v2"
	"time"
)

// A standard queue delivers at least once and in no promised order
// (SQS Developer Guide, "Amazon SQS standard queues"): a copy of a message
// kept on a server that was unavailable when the message was received or
// deleted comes back later, and a receive samples the servers rather than
// taking the oldest message first. The server models both when asked
// (Options.DuplicateFraction, Options.Reorder), seeded.

// maxDuplicateDelay bounds how long after the send a duplicate copy
// becomes visible.
const maxDuplicateDelay = 2 * time.Second

func newRand(seed uint64) *rand.Rand {
	if seed == 0 {
		seed = 1
	}
	return rand.New(rand.NewPCG(seed, 0x7371732d737464))
}

// duplicateLocked stores, with probability DuplicateFraction, a second copy
// of m: the same message id and body, visible a little later, received
// and deleted on its own (deleting one copy leaves the other).
func (s *Server) duplicateLocked(q *queue, m *message) {
	if s.dupFraction <= 0 || s.rng.Float64() >= s.dupFraction {
		return
	}
	c := *m
	c.visibleAt = m.visibleAt.Add(time.Duration(s.rng.Int64N(int64(maxDuplicateDelay))))
	q.msgs = append(q.msgs, &c)
}

// receiveOrderLocked is the order a receive looks at q's messages in:
// send order, or a random one when Reorder is on.
func (s *Server) receiveOrderLocked(q *queue) []*message {
	if !s.reorder {
		return q.msgs
	}
	out := make([]*message, len(q.msgs))
	for i, j := range s.rng.Perm(len(q.msgs)) {
		out[i] = q.msgs[j]
	}
	return out
}
