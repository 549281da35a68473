package world

import "fmt"

// DefaultThrottleScale is the world's token buckets as a fraction of
// AWS's documented defaults (Options.ThrottleScale): 1, AWS's own numbers
// for an account with no other caller, never kinder.
const DefaultThrottleScale = 1.0

// DefaultQueueDuplicates is how often the interruption queue delivers a
// message twice (Options.QueueDuplicates). A standard queue does so
// rarely; the world does it often so every test meets it.
const DefaultQueueDuplicates = 0.2

// MinThrottleScale is the smallest ThrottleScale: below it EC2's
// termination resource bucket (1000 instances) holds fewer than the 100
// instances Joinery terminates in one call, which would never pass.
const MinThrottleScale = 0.1

// checkThrottleScale refuses a scale that makes the world kinder than AWS
// or one Joinery cannot work under.
func (o Options) checkThrottleScale() error {
	switch f := o.ThrottleScale; {
	case f > 1:
		return fmt.Errorf("world: ThrottleScale %g would make the local AWS endpoints kinder than AWS (at most 1)", f)
	case f > 0 && f < MinThrottleScale:
		return fmt.Errorf("world: ThrottleScale %g is below %g: EC2's termination bucket would hold less than one TerminateInstances call of Joinery's", f, MinThrottleScale)
	}
	return nil
}

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
