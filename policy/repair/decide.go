package repair

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Repair is one node to repair now.
type Repair struct {
	Node     string
	NodePool string
	// Signal is the signal whose toleration ran out first.
	Signal Signal
	Policy Policy
	// Unreachable: the kubelet stopped posting status (Ready=Unknown), so
	// the node cannot be drained: its pods are deleted and the instance
	// terminated at once.
	Unreachable bool
}

// Blocked is a node past its toleration that the pool's cap holds back.
type Blocked struct {
	Node     string
	NodePool string
	Signal   Signal
	Message  string
}

// Decision is what Decide found.
type Decision struct {
	Repair  []Repair
	Blocked []Blocked
}

// due is a node past a toleration: the signal whose toleration ended first.
type due struct {
	node   Node
	signal Signal
	policy Policy
	at     time.Time
}

// Decide picks the nodes to repair at now. A node is due once one of its
// signals matches a policy for at least the policy's toleration (the
// earliest-ending one is its reason). Per pool, nodes being repaired and
// nodes due together may not exceed the pool's cap: the nodes due longest
// are repaired first, the rest are Blocked until repairs finish. Pools
// missing from settings use defaults; nodes without a pool share one
// cluster-wide cap (as Karpenter's standalone NodeClaims).
func Decide(nodes []Node, settings map[string]Settings, defaults Settings, now time.Time) Decision {
	byPool := map[string][]Node{}
	var pools []string
	for _, n := range nodes {
		if _, ok := byPool[n.NodePool]; !ok {
			pools = append(pools, n.NodePool)
		}
		byPool[n.NodePool] = append(byPool[n.NodePool], n)
	}
	slices.Sort(pools)
	var d Decision
	for _, pool := range pools {
		s, ok := settings[pool]
		if !ok {
			s = defaults
		}
		decidePool(&d, byPool[pool], s, now)
	}
	return d
}

func decidePool(d *Decision, nodes []Node, s Settings, now time.Time) {
	limit := s.Cap(len(nodes))
	repairing := 0
	var dues []due
	for _, n := range nodes {
		if n.Repairing {
			repairing++
			continue
		}
		if u, ok := dueOf(n, s.Policies, now); ok {
			dues = append(dues, u)
		}
	}
	slices.SortFunc(dues, func(a, b due) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.node.Name, b.node.Name))
	})
	for _, u := range dues {
		if u.node.DoNotRepair {
			d.Blocked = append(d.Blocked, Blocked{Node: u.node.Name, NodePool: u.node.NodePool, Signal: u.signal,
				Message: fmt.Sprintf("repair is blocked through the %q annotation", apiv1.AnnotationDoNotRepair)})
			continue
		}
		if repairing < limit {
			repairing++
			d.Repair = append(d.Repair, Repair{Node: u.node.Name, NodePool: u.node.NodePool, Signal: u.signal, Policy: u.policy,
				Unreachable: unreachable(u.node)})
			continue
		}
		d.Blocked = append(d.Blocked, Blocked{Node: u.node.Name, NodePool: u.node.NodePool, Signal: u.signal,
			Message: fmt.Sprintf("repair of node %s (%s=%s) blocked: %d of the %d nodes of NodePool %q are already being repaired or unhealthy, the most it allows (%s)",
				u.node.Name, u.signal.Type, u.signal.Status, repairing, len(nodes), u.node.NodePool, s.MaxUnhealthy.String())})
	}
}

// dueOf is the node's signal whose toleration ended first, if any has.
func dueOf(n Node, policies []Policy, now time.Time) (due, bool) {
	var best due
	found := false
	for _, sig := range n.Signals {
		for _, p := range policies {
			if p.Type != sig.Type || p.Status != sig.Status {
				continue
			}
			at := sig.Since.Add(p.Toleration)
			if now.Before(at) {
				continue
			}
			if !found || at.Before(best.at) {
				best, found = due{node: n, signal: sig, policy: p, at: at}, true
			}
		}
	}
	return best, found
}

// unreachable: the node's Ready condition is Unknown.
func unreachable(n Node) bool {
	for _, s := range n.Signals {
		if s.Type == ConditionReady && s.Status == StatusUnknown {
			return true
		}
	}
	return false
}
