package disruption

import (
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Expiry is when a NodeClaim expires, as Karpenter v1's expiration
// controller reads it: creationTimestamp + spec.expireAfter (copied from
// the NodePool at launch, so 720h when the pool leaves it unset). Never:
// "Never", no expiry. A NodeClaim launched before Joinery copied it has
// none: its NodePool's applies (apiv1.NodeClaim.EffectiveExpireAfter),
// so setting the pool's to Never keeps such nodes. An expired NodeClaim
// is deleted outright; its termination then drains it, bounded only by
// its terminationGracePeriod (no budgets, no do-not-disrupt, no
// quiet-cluster wait).
type Expiry struct {
	At    time.Time
	After time.Duration // the expireAfter that gave At
	Never bool
}

// ExpiryOf computes a NodeClaim's Expiry; pool is its NodePool (nil:
// gone), read only when the claim has no expireAfter. A malformed
// expireAfter (the CRD refuses it; an older CRD may not have) is an error
// naming the field and the value, and the claim never expires on it.
func ExpiryOf(nc *apiv1.NodeClaim, pool *apiv1.NodePool) (Expiry, error) {
	raw := nc.EffectiveExpireAfter(pool)
	d, err := apiv1.ParseNillableDuration(raw)
	if err != nil {
		return Expiry{Never: true}, fmt.Errorf("nodeclaim %s: spec.expireAfter %q: %v", nc.Name, raw, err)
	}
	if d == nil {
		return Expiry{Never: true}, nil
	}
	return Expiry{At: nc.CreationTimestamp.Add(*d), After: *d}, nil
}

// Expired reports whether the expiry has come at now (never for Never).
func (e Expiry) Expired(now time.Time) bool { return !e.Never && !now.Before(e.At) }
