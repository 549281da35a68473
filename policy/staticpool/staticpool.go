// Package staticpool is the policy of static NodePools (Karpenter v1.8's
// spec.replicas, StaticCapacity gate): how many NodeClaims a pool should
// have, how many to create and which to delete. It does no I/O.
//
// A static pool keeps exactly replicas NodeClaims, capped by limits.nodes.
// NodeClaims being deleted do not count (their replacements are created
// at once, as Karpenter's static provisioning controller does), so a node
// lost to a deletion, an interruption or a drift is replaced. Surplus
// NodeClaims are deleted not-yet-ready first, then the ones with the
// fewest pods, then the newest.
package staticpool

import (
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Member is one NodeClaim of a static pool.
type Member struct {
	Name string
	// Deleting: its deletion has begun (deletionTimestamp, or a
	// termination under way); it does not count.
	Deleting bool
	// Ready: its Node is initialized.
	Ready bool
	// Pods are the non-DaemonSet pods bound to its node.
	Pods    int
	Created time.Time
}

// Scale is what one pass does to a pool.
type Scale struct {
	// Want is the node count the pool should have: replicas, capped by
	// limits.nodes.
	Want int
	// Have is the count of members not being deleted (pending creations
	// included).
	Have int
	// Create is how many NodeClaims to create.
	Create int
	// Delete names the NodeClaims to delete, in deletion order.
	Delete []string
}

// Want is replicas capped by limits.nodes (nodesLimit < 0: no limit),
// never below 0.
func Want(replicas int64, nodesLimit int) int {
	w := replicas
	if nodesLimit >= 0 && int64(nodesLimit) < w {
		w = int64(nodesLimit)
	}
	if w < 0 {
		return 0
	}
	const most = 1 << 20
	if w > most {
		return most
	}
	return int(w)
}

// Decide is one pass over a static pool: its members (NodeClaims with
// the pool's label) and pending, the NodeClaims created by earlier passes
// that the cache does not show yet (they count as present, so a slow
// cache never doubles a pool).
func Decide(replicas int64, nodesLimit int, members []Member, pending int) Scale {
	s := Scale{Want: Want(replicas, nodesLimit)}
	var live []Member
	for _, m := range members {
		if !m.Deleting {
			live = append(live, m)
		}
	}
	s.Have = len(live) + pending
	switch {
	case s.Have < s.Want:
		s.Create = s.Want - s.Have
	case len(live) > s.Want && pending == 0:
		// Only surplus the cache shows is deleted; while creations are
		// pending, the next pass decides.
		sort.SliceStable(live, func(i, j int) bool { return deleteBefore(live[i], live[j]) })
		for _, m := range live[:len(live)-s.Want] {
			s.Delete = append(s.Delete, m.Name)
		}
	}
	return s
}

// deleteBefore orders surplus members: not ready first, then fewest pods,
// then newest, then by name.
func deleteBefore(a, b Member) bool {
	if a.Ready != b.Ready {
		return !a.Ready
	}
	if a.Pods != b.Pods {
		return a.Pods < b.Pods
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	return a.Name < b.Name
}

// Terminating reports whether the NodeClaim's instance is being
// terminated, or its disruption (drift, interruption, expiry) has begun:
// it then counts as Deleting, so its replacement in the pool is launched
// now, while it drains, as Karpenter's static drift launches the
// replacement first.
func Terminating(nc *apiv1.NodeClaim) bool {
	for _, c := range nc.Status.Conditions {
		if (c.Type == apiv1.ConditionInstanceTerminating || c.Type == apiv1.ConditionDisruptionReason) && c.Status == "True" {
			return true
		}
	}
	return false
}
