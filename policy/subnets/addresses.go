// Package subnets predicts the subnet addresses a node will take and picks
// the subnet of each zone a launch goes to. It is pure: the launch feeds it
// DescribeSubnets' counts and the catalog's ENI limits.
package subnets

// NodeAddresses is how many addresses of its subnet a node takes under the
// VPC CNI's default settings (WARM_ENI_TARGET=1) once pods (not
// hostNetwork) run on it: whole ENIs, each its primary address and its
// secondaries, enough that one ENI's worth stays free beyond the pods, and
// no more ENIs than the type's default network card has. An m5.large (3
// ENIs of 10) takes 10 with no pod and 20 with one; a type the catalog
// knows no ENI limits of takes its primary address.
func NodeAddresses(enis, ipv4PerENI, pods int) int {
	if enis <= 0 || ipv4PerENI <= 1 {
		return 1
	}
	perENI := ipv4PerENI - 1 // pod addresses per ENI
	want := (max(0, pods) + perENI + perENI - 1) / perENI
	return min(enis, max(1, want)) * ipv4PerENI
}

// PrefixSize is the addresses of one delegated IPv4 prefix (a /28).
const PrefixSize = 16

// PrefixAddresses is what the /28 prefixes an EC2NodeClass has EC2 assign
// at launch (spec.ipPrefixCount) take of the subnet, beside the CNI's
// addresses: a node holds them from launch until ipamd gives back the ones
// it does not use, so a launch must find them free.
func PrefixAddresses(count *int32) int {
	if count == nil || *count <= 0 {
		return 0
	}
	return int(*count) * PrefixSize
}

// Subnet is one subnet as the launch sees it: Free is DescribeSubnets'
// available count less the addresses predicted for launches in flight.
type Subnet struct {
	ID, Zone string
	Free     int
}

// PickPerZone returns, per zone, the subnet with the most free addresses
// (the lower id on a tie), as Karpenter picks.
func PickPerZone(subnets []Subnet) map[string]Subnet {
	best := map[string]Subnet{}
	for _, s := range subnets {
		cur, ok := best[s.Zone]
		if !ok || s.Free > cur.Free || (s.Free == cur.Free && s.ID < cur.ID) {
			best[s.Zone] = s
		}
	}
	return best
}

// Holds reports whether a subnet with free addresses can take a node that
// needs need of them.
func Holds(free, need int) bool { return free >= need }
