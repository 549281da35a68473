package v1

// DefaultExpireAfter is what an unset expireAfter means, on a NodePool's
// template and on a NodeClaim (Karpenter v1's default; the CRDs in
// deploy/crds default the field to it too). "Never" turns expiration off.
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

// ExpireAfterOrDefault is a NodeClaim's spec.expireAfter, DefaultExpireAfter
// when unset.
func (nc *NodeClaim) ExpireAfterOrDefault() string {
	if nc.Spec.ExpireAfter == "" {
		return DefaultExpireAfter
	}
	return nc.Spec.ExpireAfter
}
