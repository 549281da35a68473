package world

// DefaultThrottleScale is the world's token buckets as a fraction of
// AWS's documented defaults (Options.ThrottleScale): 1, AWS's own numbers
// for an account with no other caller, never kinder.
const DefaultThrottleScale = 1.0

// DefaultQueueDuplicates is how often the interruption queue delivers a
// message twice (Options.QueueDuplicates). A standard queue does so
// rarely; the world does it often so every test meets it.
const DefaultQueueDuplicates = 0.2

// throttleScale is the factor the endpoints' buckets take: 0 turns them off.
func (o Options) throttleScale() float64 {
	switch {
	case o.ThrottleScale < 0:
		return 0
	case o.ThrottleScale == 0:
		return DefaultThrottleScale
	}
	return o.ThrottleScale
}

// queueDuplicates is the interruption queue's duplicate probability.
func (o Options) queueDuplicates() float64 {
	switch {
	case o.QueueDuplicates < 0:
		return 0
	case o.QueueDuplicates == 0:
		return DefaultQueueDuplicates
	}
	return o.QueueDuplicates
}
