package ec2

import (
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
)

// DiscoveryTag is the tag key Karpenter's examples select subnets and
// security groups by; its value is Options.ClusterTag.
const DiscoveryTag = "karpenter.sh/discovery"

// subnet is one private subnet of the local VPC, one per zone. Addresses
// are handed out in order and counted back in when an instance terminates.
type subnet struct {
	id, zone, zoneID string
	octet            int   // third octet of the first address: 10.0.<octet>.0
	prefix           int   // CIDR prefix length
	size             int   // addresses in the block
	next             int   // next never-used host offset to hand out
	free             []int // offsets given back, oldest first
	inUse            int
	held             int // addresses taken by others (SetSubnetAvailable)
	// blocks are the /28 blocks (offset/16) delegated as prefixes; single
	// addresses are never handed out of them.
	blocks map[int]bool
	tags   map[string]string
}

func (sn *subnet) cidr() string { return fmt.Sprintf("10.0.%d.0/%d", sn.octet, sn.prefix) }

// available is the free address count as EC2 reports it: the block minus
// the 5 addresses AWS reserves, minus addresses in use.
func (sn *subnet) available() int { return max(0, sn.size-5-sn.inUse-sn.held) }

// allocate returns a free private address, e.g. "10.0.32.7": the next
// never used while the block has one, then the longest given back (so
// names of recent instances are not reused at once); the first four
// addresses and the last are reserved as on AWS.
func (sn *subnet) allocate() (string, error) {
	for sn.next < sn.size-1 && sn.blocks[sn.next/prefixSize] {
		sn.next++ // a delegated prefix: its addresses are not single ones
	}
	if sn.available() <= 0 || (len(sn.free) == 0 && sn.next >= sn.size-1) {
		return "", errors.New(insufficientAddresses(sn.id))
	}
	var off int
	if sn.next < sn.size-1 {
		off = sn.next
		sn.next++
	} else {
		off, sn.free = sn.free[0], sn.free[1:]
	}
	sn.inUse++
	return fmt.Sprintf("10.0.%d.%d", sn.octet+off/256, off%256), nil
}

// release gives an address of the subnet back.
func (sn *subnet) release(ip string) {
	var a, b, c, d int
	if _, err := fmt.Sscanf(ip, "%d.%d.%d.%d", &a, &b, &c, &d); err != nil {
		return
	}
	if off := (c-sn.octet)*256 + d; off >= 4 && off < sn.size-1 {
		sn.free = append(sn.free, off)
		sn.inUse = max(0, sn.inUse-1)
	}
}

type securityGroup struct {
	id, name, description string
	tags                  map[string]string
}

// zoneID maps "us-east-1" zone index 0 to "use1-az1".
func zoneID(region string, i int) string {
	parts := strings.Split(region, "-")
	abbr := region
	if len(parts) == 3 && len(parts[1]) > 0 {
		abbr = parts[0] + parts[1][:1] + parts[2]
	}
	return abbr + "-az" + strconv.Itoa(i+1)
}

// initNetwork builds the VPC 10.0.0.0/16 split into one equal block per
// zone, and the security groups.
func (s *Server) initNetwork() {
	s.vpcID = s.resourceIDLocked("vpc")
	n := len(s.opts.Zones)
	extra := bits.Len(uint(n - 1)) // bits to split the /16 into ≥ n blocks
	if extra > 8 {
		extra = 8
	}
	blockOctets := 256 >> extra
	for i, z := range s.opts.Zones {
		s.subnets = append(s.subnets, &subnet{
			id: s.resourceIDLocked("subnet"), zone: z, zoneID: zoneID(s.opts.Region, i),
			octet: (i * blockOctets) % 256, prefix: 16 + extra, size: blockOctets * 256, next: 4,
			tags: map[string]string{
				DiscoveryTag:                      s.opts.ClusterTag,
				"Name":                            s.opts.ClusterTag + "-private-" + z,
				"kubernetes.io/role/internal-elb": "1",
			},
		})
	}
	s.groups = []*securityGroup{
		{id: s.resourceIDLocked("sg"), name: "default", description: "default VPC security group", tags: map[string]string{}},
		{id: s.resourceIDLocked("sg"), name: s.opts.ClusterTag + "-node", description: "EKS node shared security group",
			tags: map[string]string{DiscoveryTag: s.opts.ClusterTag, "Name": s.opts.ClusterTag + "-node"}},
	}
}

// SetSubnetAvailable makes the subnet report n free addresses (as if
// others used the rest): DescribeSubnets shows n, and CreateFleet answers
// InsufficientFreeAddressesInSubnet for it once n launches used them up.
// n larger than the block allows is capped.
func (s *Server) SetSubnetAvailable(id string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.subnetByID(id)
	if sn == nil {
		return fmt.Errorf("ec2 sim: no subnet %s", id)
	}
	if n < 0 {
		return fmt.Errorf("ec2 sim: subnet %s: %d free addresses", id, n)
	}
	sn.held = max(0, sn.size-5-sn.inUse-n)
	return nil
}

// SubnetIDs returns the subnet ids, in zone order.
func (s *Server) SubnetIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.subnets))
	for i, sn := range s.subnets {
		out[i] = sn.id
	}
	return out
}

// SecurityGroupIDs returns the security group ids: the VPC's default group
// first, then the cluster's node group.
func (s *Server) SecurityGroupIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.groups))
	for i, g := range s.groups {
		out[i] = g.id
	}
	return out
}

func (s *Server) subnetByID(id string) *subnet {
	for _, sn := range s.subnets {
		if sn.id == id {
			return sn
		}
	}
	return nil
}

func (s *Server) subnetByZone(zone string) *subnet {
	for _, sn := range s.subnets {
		if sn.zone == zone {
			return sn
		}
	}
	return nil
}

func (s *Server) zoneIDOf(zone string) string {
	if sn := s.subnetByZone(zone); sn != nil {
		return sn.zoneID
	}
	return ""
}

var subnetFields = fields[*subnet]{
	"subnet-id":            func(sn *subnet) []string { return []string{sn.id} },
	"availability-zone":    func(sn *subnet) []string { return []string{sn.zone} },
	"availability-zone-id": func(sn *subnet) []string { return []string{sn.zoneID} },
	"cidr-block":           func(sn *subnet) []string { return []string{sn.cidr()} },
	"state":                func(*subnet) []string { return []string{"available"} },
}

func (s *Server) describeSubnets(f form) (withRequestID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.subnets
	if ids := f.strings("SubnetId"); len(ids) > 0 {
		items = nil
		for _, id := range ids {
			sn := s.subnetByID(id)
			if sn == nil {
				return nil, newError(http.StatusBadRequest, CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", id)
			}
			items = append(items, sn)
		}
	}
	fs := fields[*subnet]{"vpc-id": func(*subnet) []string { return []string{s.vpcID} }}
	for k, v := range subnetFields {
		fs[k] = v
	}
	idx := indexOf(s.subnets)
	items, next, err := filterPage(f, items, fs, func(sn *subnet) map[string]string { return sn.tags },
		func(sn *subnet) uint64 { return idx[sn] }, "subnets", 0, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeSubnetsResponse{NextToken: next}
	for _, sn := range items {
		out.Subnets = append(out.Subnets, subnetXML{
			SubnetID: sn.id, State: "available", VpcID: s.vpcID, OwnerID: s.opts.AccountID,
			SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", s.opts.Region, s.opts.AccountID, sn.id),
			CidrBlock: sn.cidr(), AvailableIPAddressCount: sn.available(),
			AvailabilityZone: sn.zone, AvailabilityZoneID: sn.zoneID, Tags: tagSet(sn.tags),
		})
	}
	return out, nil
}

var groupFields = fields[*securityGroup]{
	"group-id":    func(g *securityGroup) []string { return []string{g.id} },
	"group-name":  func(g *securityGroup) []string { return []string{g.name} },
	"description": func(g *securityGroup) []string { return []string{g.description} },
}

func (s *Server) describeSecurityGroups(f form) (withRequestID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.groups
	ids, names := f.strings("GroupId"), f.strings("GroupName")
	if len(ids) > 0 || len(names) > 0 {
		items = nil
		for _, id := range ids {
			g := s.groupBy(func(g *securityGroup) bool { return g.id == id })
			if g == nil {
				return nil, newError(http.StatusBadRequest, CodeInvalidGroupNotFound, "The security group '%s' does not exist", id)
			}
			items = append(items, g)
		}
		for _, name := range names {
			g := s.groupBy(func(g *securityGroup) bool { return g.name == name })
			if g == nil {
				return nil, newError(http.StatusBadRequest, CodeInvalidGroupNotFound,
					"The security group '%s' does not exist in default VPC '%s'", name, s.vpcID)
			}
			items = append(items, g)
		}
	}
	fs := fields[*securityGroup]{"vpc-id": func(*securityGroup) []string { return []string{s.vpcID} }}
	for k, v := range groupFields {
		fs[k] = v
	}
	idx := indexOf(s.groups)
	items, next, err := filterPage(f, items, fs, func(g *securityGroup) map[string]string { return g.tags },
		func(g *securityGroup) uint64 { return idx[g] }, "groups", 0, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeSecurityGroupsResponse{NextToken: next}
	for _, g := range items {
		out.Groups = append(out.Groups, securityGroupXML{
			OwnerID: s.opts.AccountID, GroupID: g.id, GroupName: g.name, GroupDescription: g.description,
			VpcID:            s.vpcID,
			SecurityGroupArn: fmt.Sprintf("arn:aws:ec2:%s:%s:security-group/%s", s.opts.Region, s.opts.AccountID, g.id),
			Tags:             tagSet(g.tags),
		})
	}
	return out, nil
}

func (s *Server) groupBy(pred func(*securityGroup) bool) *securityGroup {
	for _, g := range s.groups {
		if pred(g) {
			return g
		}
	}
	return nil
}

// indexOf maps each item to its position, the page key of static lists.
func indexOf[T comparable](items []T) map[T]uint64 {
	m := make(map[T]uint64, len(items))
	for i, it := range items {
		m[it] = uint64(i)
	}
	return m
}
