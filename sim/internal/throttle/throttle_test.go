package throttle

import (
	"math"
	"sync"
	"testing"
	"time"
)

// clock is a settable time for the buckets.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

// The documented example: DescribeHosts' bucket of 100 refilling 20 a
// second. 100 calls empty it, the 101st is refused, a second later 20 more
// pass, and 5 idle seconds fill it again but never past 100.
func TestBucketBurstThenRefillEachSecond(t *testing.T) {
	c := newClock()
	b := NewBucket(Limit{Burst: 100, Refill: 20}, c.now)
	for i := range 100 {
		if !b.Take(1) {
			t.Fatalf("call %d refused within the burst", i+1)
		}
	}
	if b.Take(1) {
		t.Fatal("call 101 passed an empty bucket")
	}
	c.add(999 * time.Millisecond)
	if b.Take(1) {
		t.Fatal("refilled before a whole second passed")
	}
	c.add(time.Millisecond)
	for i := range 20 {
		if !b.Take(1) {
			t.Fatalf("call %d of the first refill refused", i+1)
		}
	}
	if b.Take(1) {
		t.Fatal("more than one refill in one second")
	}
	c.add(10 * time.Second)
	if got := b.Tokens(); got != 100 {
		t.Fatalf("after 10 idle seconds %v tokens, want the burst 100 (extra refill dropped)", got)
	}
}

// A resource bucket is taken from by the number of resources a call
// touches; a call needing more than is left is refused whole and takes
// nothing.
func TestBucketTakesNOrNothing(t *testing.T) {
	c := newClock()
	b := NewBucket(Limit{Burst: 1000, Refill: 2}, c.now)
	if !b.Take(750) {
		t.Fatal("750 of 1000 refused")
	}
	if b.Take(251) {
		t.Fatal("251 taken from 250")
	}
	if got := b.Tokens(); got != 250 {
		t.Fatalf("a refused call took tokens: %v left, want 250", got)
	}
	if !b.Take(250) {
		t.Fatal("the last 250 refused")
	}
	c.add(3 * time.Second)
	if got := b.Tokens(); got != 6 {
		t.Fatalf("after 3 s at 2/s: %v tokens, want 6", got)
	}
}

// Refills below a token a second (AWS publishes some) add up.
func TestBucketFractionalRefill(t *testing.T) {
	c := newClock()
	b := NewBucket(Limit{Burst: 1, Refill: 0.25}, c.now)
	b.Take(1)
	c.add(3 * time.Second)
	if b.Take(1) {
		t.Fatal("0.75 tokens served a call")
	}
	c.add(time.Second)
	if !b.Take(1) {
		t.Fatal("4 s at 0.25/s did not give a token")
	}
}

func TestSetScalesAndKeepsBucketsApart(t *testing.T) {
	c := newClock()
	s := NewSet(0.5, c.now)
	l := Limit{Burst: 4, Refill: 2}
	if s.Take("DescribeInstances", l, 3) {
		t.Fatal("3 taken from a bucket scaled to 2")
	}
	if !s.Take("DescribeInstances", l, 2) || s.Take("DescribeInstances", l, 1) {
		t.Fatal("the scaled burst of 2 not served exactly")
	}
	if !s.Take("DescribeSubnets", l, 2) {
		t.Fatal("another API's bucket was drained by the first one's calls")
	}
	c.add(time.Second)
	if got := s.Tokens("DescribeInstances", l); got != 1 {
		t.Fatalf("scaled refill: %v tokens, want 1", got)
	}
}

func TestNilSetNeverThrottles(t *testing.T) {
	s := NewSet(0, nil)
	if s != nil {
		t.Fatal("scale 0 gave a set")
	}
	if !s.Take("x", Limit{}, 1e9) || !math.IsInf(s.Tokens("x", Limit{}), 1) || s.Scale() != 0 {
		t.Fatal("a nil set throttled")
	}
}
