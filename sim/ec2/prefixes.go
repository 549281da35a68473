package ec2

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// prefixSize is the addresses of one delegated IPv4 prefix (a /28).
const prefixSize = 16

// EC2's codes for prefixes it cannot delegate: the subnet has the
// addresses but no whole free /28 (InsufficientCidrBlocks, as
// AssignPrivateIpAddresses and CreateNetworkInterface answer it), or the
// interface has not the address slots (each prefix takes one, the primary
// address one).
const (
	CodeInsufficientCidrBlocks        = "InsufficientCidrBlocks"
	CodePrivateIPAddressLimitExceeded = "PrivateIpAddressLimitExceeded"
)

// allocatePrefix delegates the lowest /28 of the subnet that is wholly
// free: no reserved address (the first four, the last), none handed out
// singly and not given back, none in another prefix. EC2 carves prefixes
// only from such aligned blocks, so a subnet whose free addresses are
// scattered has none to give (fragmentation).
func (sn *subnet) allocatePrefix() (string, bool) {
	if sn.available() < prefixSize {
		return "", false
	}
	given := map[int]bool{}
	for _, off := range sn.free {
		given[off] = true
	}
	for b := 0; (b+1)*prefixSize <= sn.size; b++ {
		lo, hi := b*prefixSize, (b+1)*prefixSize-1
		if lo < 4 || hi >= sn.size-1 || sn.blocks[b] {
			continue
		}
		free := true
		for off := lo; off <= hi && free; off++ {
			free = off >= sn.next || given[off]
		}
		if !free {
			continue
		}
		sn.free = slices.DeleteFunc(sn.free, func(off int) bool { return off >= lo && off <= hi })
		if sn.blocks == nil {
			sn.blocks = map[int]bool{}
		}
		sn.blocks[b] = true
		sn.inUse += prefixSize
		return sn.addr(lo) + "/28", true
	}
	return "", false
}

// releasePrefix gives a delegated /28 back: its addresses are free again,
// singly or as a prefix.
func (sn *subnet) releasePrefix(cidr string) {
	b, ok := sn.block(cidr)
	if !ok || !sn.blocks[b] {
		return
	}
	delete(sn.blocks, b)
	sn.inUse = max(0, sn.inUse-prefixSize)
	for off := b * prefixSize; off < (b+1)*prefixSize; off++ {
		if off < sn.next {
			sn.free = append(sn.free, off)
		}
	}
}

// block is the /28 block index of a prefix of the subnet.
func (sn *subnet) block(cidr string) (int, bool) {
	var a, b, c, d int
	if _, err := fmt.Sscanf(strings.TrimSuffix(cidr, "/28"), "%d.%d.%d.%d", &a, &b, &c, &d); err != nil {
		return 0, false
	}
	off := (c-sn.octet)*256 + d
	if off < 0 || off >= sn.size || off%prefixSize != 0 {
		return 0, false
	}
	return off / prefixSize, true
}

func (sn *subnet) addr(off int) string {
	return fmt.Sprintf("10.0.%d.%d", sn.octet+off/256, off%256)
}

// checkPrefixCountLocked records on o EC2's refusal of the template's
// prefix count for the override's type, whatever the subnet: the local
// subnets have no IPv6 CIDR; only Nitro types take prefixes; the primary
// interface holds its address and the prefixes in its IPv4 slots.
// (The codes and texts for the first two are not documented for a launch:
// InvalidParameterValue is EC2's answer to a parameter the request may not
// have, and refusing is the safe side.)
func checkPrefixCountLocked(o *fleetOverride) {
	d := &o.lt.Data
	if d.IPv6PrefixCount != nil && *d.IPv6PrefixCount > 0 {
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("The subnet '%s' has no IPv6 CIDR block to delegate prefixes from.", o.subnet.id))
		return
	}
	n := prefixCount(d)
	if n == 0 || o.it == nil {
		return
	}
	if o.it.Hypervisor == "xen" {
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("Prefix delegation is not supported for the instance type '%s'.", o.it.Name))
		return
	}
	if limit := o.it.IPv4PerENI; limit > 0 && n+1 > limit {
		o.fail(CodePrivateIPAddressLimitExceeded, "Number of private addresses will exceed limit.")
	}
}

// prefixCount is the template's IPv4 prefix count (0: none).
func prefixCount(d *LaunchTemplateData) int {
	if d.IPv4PrefixCount == nil {
		return 0
	}
	return int(*d.IPv4PrefixCount)
}

// prefixRoomCode is why the subnet cannot take a launch of the override
// with its primary address and prefixes ("": it can): too few free
// addresses, or no whole free /28 blocks.
func prefixRoomCode(o *fleetOverride) (code, msg string) {
	n := prefixCount(&o.lt.Data)
	if n == 0 {
		return "", ""
	}
	if o.subnet.available() < 1+n*prefixSize {
		return CodeInsufficientFreeAddresses, insufficientAddresses(o.subnet.id)
	}
	return "", ""
}

// assignPrefixes delegates n prefixes of the subnet to a launching
// instance: all of them, or none and InsufficientCidrBlocks.
func assignPrefixes(sn *subnet, n int) ([]string, error) {
	var out []string
	for range n {
		p, ok := sn.allocatePrefix()
		if !ok {
			for _, got := range out {
				sn.releasePrefix(got)
			}
			return nil, newError(http.StatusBadRequest, CodeInsufficientCidrBlocks,
				"The specified subnet does not have enough free cidr blocks to satisfy the request.")
		}
		out = append(out, p)
	}
	return out, nil
}

// UnassignPrefixes gives delegated prefixes of an instance back to its
// subnet (ipamd freeing the prefixes it does not use); others are ignored.
func (s *Server) UnassignPrefixes(instanceID string, prefixes []string) {
	s.giveBack(instanceID, prefixes, func(in *instance) *[]string { return &in.IPv4Prefixes }, (*subnet).releasePrefix)
}

// PrefixAddresses are the 16 addresses of a /28 prefix, in order (nil for
// a malformed one).
func PrefixAddresses(prefix string) []string {
	base := strings.TrimSuffix(prefix, "/28")
	var a, b, c, d int
	if _, err := fmt.Sscanf(base, "%d.%d.%d.%d", &a, &b, &c, &d); err != nil {
		return nil
	}
	out := make([]string, prefixSize)
	for i := range out {
		out[i] = fmt.Sprintf("%d.%d.%d.%d", a, b, c, d+i)
	}
	return out
}
