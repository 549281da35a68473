package catalog

import (
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Cards is how many network cards the type has as the catalog knows it: 0
// when it has no interface data, else at least one.
func (it *InstanceType) Cards() int {
	if it.DefaultCardMaxENIs == 0 && it.NetworkBandwidthMbps == 0 {
		return 0
	}
	return max(it.NetworkCards, 1)
}

// CardENIs is how many interfaces network card i takes (0: no such card):
// the default card (0) DefaultCardMaxENIs, the others an even share of the
// rest of MaxENIs (what DescribeInstanceTypes says per card for the
// multi-card types the catalog lists).
func (it *InstanceType) CardENIs(i int) int {
	cards := it.Cards()
	switch {
	case i < 0 || i >= cards:
		return 0
	case i == 0:
		return it.DefaultCardMaxENIs
	}
	return max(it.MaxENIs-it.DefaultCardMaxENIs, 0) / (cards - 1)
}

// interfacesUnlaunchable is why EC2 refuses the class's network interfaces
// on the type ("" when it takes them), Karpenter's compatibility checks: a
// type with network cards, each interface's card present and its device
// index below the card's interface limit, no more efa-only interfaces
// than the type's EFA limit.
func (it *InstanceType) interfacesUnlaunchable(nis []apiv1.NetworkInterface) string {
	if len(nis) == 0 {
		return ""
	}
	if it.Cards() == 0 {
		return "has no network card data (spec.networkInterfaces)"
	}
	for _, ni := range nis {
		card := int(ni.NetworkCardIndex)
		if card >= it.Cards() {
			return fmt.Sprintf("has %d network card(s), no card %d (spec.networkInterfaces)", it.Cards(), card)
		}
		if limit := it.CardENIs(card); int(ni.DeviceIndex) >= limit {
			return fmt.Sprintf("takes %d interfaces on card %d, no device index %d (spec.networkInterfaces)", limit, card, ni.DeviceIndex)
		}
	}
	if n := apiv1.EFAOnlyInterfaces(nis, -1); n > it.EFACount {
		return fmt.Sprintf("takes %d EFA interfaces, not %d (spec.networkInterfaces)", it.EFACount, n)
	}
	return ""
}

// InterfacePods is the ENI-limited max pods of a node launched with the
// class's interfaces when some of them are efa-only on the default card:
// those carry no IP addresses, so the VPC CNI has that many interfaces
// fewer (Karpenter's ENILimitedPods). ok false: none are, the type's
// MaxPods holds (and the node agent's own count agrees with it).
func (it *InstanceType) InterfacePods(nis []apiv1.NetworkInterface) (pods int, ok bool) {
	n := apiv1.EFAOnlyInterfaces(nis, 0)
	if n == 0 || it.MaxPods == 0 {
		return 0, false
	}
	return ENIMaxPods(it.DefaultCardMaxENIs-n, it.IPv4PerENI), true
}

// EFAInterfaces is the node's vpc.amazonaws.com/efa capacity as Karpenter
// plans it: with the class's interfaces set, their efa-only count (the
// interfaces the EFA device plugin finds), else the type's EFA limit
// (what a launch for pods that request EFA attaches).
func (it *InstanceType) EFAInterfaces(nis []apiv1.NetworkInterface) int {
	if len(nis) > 0 {
		return apiv1.EFAOnlyInterfaces(nis, -1)
	}
	return it.EFACount
}
