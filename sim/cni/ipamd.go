package cni

import "time"

// Settings are the aws-node DaemonSet's env; zero values take the CNI's
// defaults.
type Settings struct {
	// WarmENITarget is how many ENIs' worth of free addresses to keep
	// (WARM_ENI_TARGET, default 1); ignored when WarmIPTarget or
	// MinimumIPTarget is set.
	WarmENITarget int
	// WarmIPTarget keeps that many free addresses (WARM_IP_TARGET);
	// MinimumIPTarget is a floor on the addresses held (MINIMUM_IP_TARGET).
	WarmIPTarget, MinimumIPTarget int
	// PrefixDelegation assigns /28 prefixes in place of secondary addresses
	// (ENABLE_PREFIX_DELEGATION); WarmPrefixTarget is how many free prefixes
	// to keep (WARM_PREFIX_TARGET, default 1).
	PrefixDelegation bool
	WarmPrefixTarget int
	// IPCooldown is how long a freed pod address waits before reuse
	// (IP_COOLDOWN_PERIOD, default 30 s).
	IPCooldown time.Duration
}

// DefaultIPCooldown is IP_COOLDOWN_PERIOD's default.
const DefaultIPCooldown = 30 * time.Second

// prefixSize is the addresses in one delegated /28 prefix.
const prefixSize = 16

// Limits are an instance type's network limits as EC2 describes them: the
// ENIs of its default network card and the IPv4 addresses per ENI.
type Limits struct {
	ENIs, IPv4PerENI int
}

func (s Settings) withDefaults() Settings {
	if s.WarmENITarget <= 0 {
		s.WarmENITarget = 1
	}
	if s.WarmPrefixTarget <= 0 {
		s.WarmPrefixTarget = 1
	}
	if s.IPCooldown == 0 {
		s.IPCooldown = DefaultIPCooldown
	}
	return s
}

// Pool is what a node holds: attached ENIs and the subnet addresses they
// take, ENI primaries included.
type Pool struct {
	ENIs, Addresses int
}

// PodSlots is how many pod addresses the pool holds (all but the ENI
// primaries).
func (p Pool) PodSlots() int { return p.Addresses - p.ENIs }

// Want is the pool ipamd keeps on a node of type l with used pod addresses
// taken (assigned or cooling down), capped at the type's ENIs.
func (s Settings) Want(l Limits, used int) Pool {
	s = s.withDefaults()
	if l.ENIs <= 0 || l.IPv4PerENI <= 1 {
		return Pool{ENIs: 1, Addresses: 1}
	}
	slots := l.IPv4PerENI - 1 // secondary addresses, or prefixes, per ENI
	perSlot := 1
	var want int // slots wanted
	byIP := s.WarmIPTarget > 0 || s.MinimumIPTarget > 0
	switch {
	case s.PrefixDelegation && byIP:
		perSlot = prefixSize
		want = ceilDiv(max(used+s.WarmIPTarget, s.MinimumIPTarget), prefixSize)
	case s.PrefixDelegation:
		perSlot = prefixSize
		want = ceilDiv(used, prefixSize) + s.WarmPrefixTarget
	case byIP:
		want = max(used+s.WarmIPTarget, s.MinimumIPTarget)
	default: // whole ENIs: one ENI's worth free beyond the used addresses
		want = max(slots, ceilDiv(used+s.WarmENITarget*slots, slots)*slots)
	}
	enis := min(l.ENIs, max(1, ceilDiv(want, slots)))
	want = min(want, enis*slots)
	return Pool{ENIs: enis, Addresses: enis + want*perSlot}
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
