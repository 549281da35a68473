package cloud

import (
	"sync"
	"time"
)

// DefaultICETTL is how long an offering stays unavailable after an
// insufficient-capacity error (Karpenter uses 3 minutes as well).
const DefaultICETTL = 3 * time.Minute

// ICECache remembers offerings that recently failed for lack of capacity,
// each for a TTL, so the solver can skip them. It is safe for concurrent use;
// a nil *ICECache holds nothing and ignores marks.
type ICECache struct {
	mu    sync.Mutex
	ttl   time.Duration
	now   func() time.Time
	until map[OfferingKey]time.Time
}

// NewICECache returns an empty cache whose entries live ttl (<= 0:
// DefaultICETTL), timed by now (nil: time.Now).
func NewICECache(ttl time.Duration, now func() time.Time) *ICECache {
	if ttl <= 0 {
		ttl = DefaultICETTL
	}
	if now == nil {
		now = time.Now
	}
	return &ICECache{ttl: ttl, now: now, until: map[OfferingKey]time.Time{}}
}

// MarkUnavailable makes the offering unavailable for the TTL from now (a
// second mark extends it).
func (c *ICECache) MarkUnavailable(instanceType, zone, capacityType string) {
	c.MarkAll([]OfferingKey{{instanceType, zone, capacityType}})
}

// MarkAll makes each offering unavailable for the TTL from now.
func (c *ICECache) MarkAll(offerings []OfferingKey) {
	if c == nil || len(offerings) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	exp := c.now().Add(c.ttl)
	for _, o := range offerings {
		c.until[o] = exp
	}
}

// Unavailable reports whether the offering was marked less than the TTL ago.
func (c *ICECache) Unavailable(instanceType, zone, capacityType string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := OfferingKey{instanceType, zone, capacityType}
	exp, ok := c.until[k]
	if !ok {
		return false
	}
	if !c.now().Before(exp) {
		delete(c.until, k)
		return false
	}
	return true
}

// Len is the number of offerings currently unavailable.
func (c *ICECache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, exp := range c.until {
		if !now.Before(exp) {
			delete(c.until, k)
		}
	}
	return len(c.until)
}
