package aws

import (
	"slices"
	"sync"
	"time"

	"github.com/joinery/joinery/catalog"
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
	// onMark, when set, receives every mark (offering -> until) after it
	// is applied, outside the lock: the worker shares marks with the other
	// replicas and keeps them across restarts through it.
	onMark func(map[OfferingKey]time.Time)
}

// OnMark sets the function that receives every mark (see ICECache.onMark).
func (c *ICECache) OnMark(fn func(map[OfferingKey]time.Time)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.onMark = fn
	c.mu.Unlock()
}

// Merge adds marks learned elsewhere (another replica, the shared store):
// each offering is unavailable until the later of the two times. Entries
// already past are ignored. OnMark is not called.
func (c *ICECache) Merge(until map[OfferingKey]time.Time) {
	if c == nil || len(until) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, t := range until {
		if now.Before(t) && t.After(c.until[k]) {
			c.until[k] = t
		}
	}
}

// Entries returns the offerings currently unavailable and until when.
func (c *ICECache) Entries() map[OfferingKey]time.Time {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := make(map[OfferingKey]time.Time, len(c.until))
	for k, t := range c.until {
		if now.Before(t) {
			out[k] = t
		}
	}
	return out
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
	c.MarkAll([]OfferingKey{{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}})
}

// MarkAll makes each offering unavailable for the TTL from now.
func (c *ICECache) MarkAll(offerings []OfferingKey) {
	if c == nil || len(offerings) == 0 {
		return
	}
	c.mu.Lock()
	exp := c.now().Add(c.ttl)
	marked := make(map[OfferingKey]time.Time, len(offerings))
	for _, o := range offerings {
		if exp.After(c.until[o]) {
			c.until[o] = exp
		}
		marked[o] = c.until[o]
	}
	fn := c.onMark
	c.mu.Unlock()
	if fn != nil {
		fn(marked)
	}
}

// Unavailable reports whether the offering, or the vCPU quota it counts
// against (QuotaOffering), was marked less than the TTL ago.
func (c *ICECache) Unavailable(instanceType, zone, capacityType string) bool {
	return c.UnavailableIn("")(instanceType, zone, capacityType)
}

// UnavailableIn is Unavailable for launches into the placement group
// ("": none): also an offering marked within that group.
func (c *ICECache) UnavailableIn(group string) func(instanceType, zone, capacityType string) bool {
	return func(instanceType, zone, capacityType string) bool {
		if c == nil {
			return false
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		now := c.now()
		k := OfferingKey{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}
		if c.markedLocked(k, now) || c.markedLocked(QuotaOffering(catalog.QuotaBucket(instanceType), capacityType), now) {
			return true
		}
		k.PlacementGroup = group
		return group != "" && c.markedLocked(k, now)
	}
}

// markedLocked reports whether k is marked and not yet expired (an
// expired mark is dropped).
func (c *ICECache) markedLocked(k OfferingKey, now time.Time) bool {
	exp, ok := c.until[k]
	if !ok {
		return false
	}
	if !now.Before(exp) {
		delete(c.until, k)
		return false
	}
	return true
}

// QuotaOffering is the cache entry of a whole vCPU quota: a bucket of
// families (catalog.QuotaBucket) bought as a capacity type. The quota is
// the account's in the region, so once EC2 refuses a launch past it every
// offering of the bucket fails alike, in every zone: marking them all at
// once sends the next plan elsewhere (another capacity type, bucket or
// NodePool) instead of trying them one by one. No instance type is named
// "quota.*", and the key is a valid shared-state key.
func QuotaOffering(bucket, capacityType string) OfferingKey {
	return OfferingKey{InstanceType: "quota." + bucket, Zone: "all", CapacityType: capacityType}
}

// quotaCodes are the CreateFleet codes of a launch past a vCPU quota.
var quotaCodes = map[string]bool{"VcpuLimitExceeded": true, "MaxSpotInstanceCountExceeded": true}

// quotaMarks lists the quotas fleet errors say are used up.
func quotaMarks(errs []FleetError) []OfferingKey {
	var out []OfferingKey
	for _, fe := range errs {
		if !quotaCodes[fe.Code] || fe.Offering.InstanceType == "" {
			continue
		}
		k := QuotaOffering(catalog.QuotaBucket(fe.Offering.InstanceType), fe.Offering.CapacityType)
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
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
