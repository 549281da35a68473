package v1

// DefaultExpireAfter is what an unset expireAfter means on a NodePool's
// template (Karpenter v1's default; the NodePool CRD in deploy/crds
// defaults the field to it too), and so on the NodeClaims launched from
// it, which copy it. "Never" turns expiration off.
const DefaultExpireAfter = "720h"

// SetDefaults fills the NodePool fields that have a default and are unset,
// as the API server does from the CRD's schema defaults: objects read from
// a cluster with an older CRD, or from files (starter plan), get the same
// values. Today: spec.template.spec.expireAfter (DefaultExpireAfter).
func (np *NodePool) SetDefaults() {
	if np.Spec.Template.Spec.ExpireAfter == "" {
		np.Spec.Template.Spec.ExpireAfter = DefaultExpireAfter
	}
}

// EffectiveExpireAfter is a NodeClaim's spec.expireAfter; unset (a
// NodeClaim launched before Joinery copied it), its NodePool's
// (defaulted), or DefaultExpireAfter when the pool is gone.
func (nc *NodeClaim) EffectiveExpireAfter(pool *NodePool) string {
	switch {
	case nc.Spec.ExpireAfter != "":
		return nc.Spec.ExpireAfter
	case pool != nil && pool.Spec.Template.Spec.ExpireAfter != "":
		return pool.Spec.Template.Spec.ExpireAfter
	}
	return DefaultExpireAfter
}
