package disruption

import (
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Expiry is when a NodeClaim expires, as Karpenter v1's expiration
// controller reads it: creationTimestamp + spec.expireAfter (unset:
// apiv1.DefaultExpireAfter, 720h). Never: "Never", no expiry. An expired
// NodeClaim is deleted outright; its termination then drains it, bounded
// only by its terminationGracePeriod (no budgets, no do-not-disrupt, no
// quiet-cluster wait).
type Expiry struct {
	At    time.Time
	After time.Duration // the expireAfter that gave At
	Never bool
}

// ExpiryOf computes a NodeClaim's Expiry. A malformed expireAfter (the
// CRD refuses it; an older CRD may not have) is an error naming the field
// and the value, and the claim never expires on it.
func ExpiryOf(nc *apiv1.NodeClaim) (Expiry, error) {
	raw := nc.ExpireAfterOrDefault()
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
