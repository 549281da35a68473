// Package throttle holds the token buckets the local AWS endpoints refuse
// calls with when a caller goes faster than AWS lets it, as EC2 documents
// its throttling ("Request throttling for the Amazon EC2 API"): a bucket
// holds up to Burst tokens, a call takes its tokens or is refused, and
// Refill tokens are added once every second (what overflows is dropped).
package throttle

import (
	"math"
	"sync"
	"time"
)

// Limit is one bucket's size and refill: up to Burst tokens, Refill added
// each second. AWS publishes some refills below one token a second.
type Limit struct {
	Burst  float64
	Refill float64
}

// Scaled is l with its burst and refill multiplied by f.
func (l Limit) Scaled(f float64) Limit { return Limit{Burst: l.Burst * f, Refill: l.Refill * f} }

// Bucket is one token bucket; it starts full. Safe for concurrent use.
type Bucket struct {
	mu     sync.Mutex
	limit  Limit
	tokens float64
	epoch  time.Time // refills happen at whole seconds after it
	ticks  int64     // refills applied so far
	now    func() time.Time
}

// NewBucket returns a full bucket timed by now (nil: time.Now).
func NewBucket(l Limit, now func() time.Time) *Bucket {
	if now == nil {
		now = time.Now
	}
	return &Bucket{limit: l, tokens: l.Burst, epoch: now(), now: now}
}

// Take takes n tokens and reports true, or takes none and reports false
// when fewer than n are left: a call that needs more than the bucket holds
// is refused whole, as EC2 refuses a launch of more instances than its
// resource bucket holds.
func (b *Bucket) Take(n float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// Tokens is how many tokens the bucket holds now.
func (b *Bucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	return b.tokens
}

// refillLocked adds Refill for each whole second passed since the last
// refill. Whole seconds, not a continuous trickle: a caller that emptied
// the bucket waits for the next second, as on EC2.
func (b *Bucket) refillLocked() {
	ticks := int64(b.now().Sub(b.epoch) / time.Second)
	if ticks <= b.ticks {
		return
	}
	b.tokens = math.Min(b.limit.Burst, b.tokens+float64(ticks-b.ticks)*b.limit.Refill)
	b.ticks = ticks
}

// Set is named buckets, each created full on first use with the limit the
// caller names, every limit scaled by the set's factor. A nil *Set never
// throttles. Safe for concurrent use.
type Set struct {
	scale   float64
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*Bucket
}

// NewSet returns a Set scaling every limit by scale; scale <= 0 returns
// nil, a set that never throttles. now times the buckets (nil: time.Now).
func NewSet(scale float64, now func() time.Time) *Set {
	if scale <= 0 {
		return nil
	}
	return &Set{scale: scale, now: now, buckets: map[string]*Bucket{}}
}

// Scale is the factor the set scales every limit by (0 for a nil set).
func (s *Set) Scale() float64 {
	if s == nil {
		return 0
	}
	return s.scale
}

// Take takes n tokens from the named bucket (created with limit l on first
// use) and reports whether it could; a nil set always can.
func (s *Set) Take(name string, l Limit, n float64) bool {
	if s == nil {
		return true
	}
	return s.bucket(name, l).Take(n)
}

// Tokens is how many tokens the named bucket holds (its scaled burst when
// unused so far; +Inf for a nil set).
func (s *Set) Tokens(name string, l Limit) float64 {
	if s == nil {
		return math.Inf(1)
	}
	return s.bucket(name, l).Tokens()
}

func (s *Set) bucket(name string, l Limit) *Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[name]
	if !ok {
		b = NewBucket(l.Scaled(s.scale), s.now)
		s.buckets[name] = b
	}
	return b
}
