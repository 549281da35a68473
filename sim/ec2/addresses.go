package ec2

import (
	"fmt"
	"net/http"
	"slices"
)

// AssignAddresses gives a running or pending instance n more addresses of
// its subnet, as ipamd gets them with CreateNetworkInterface +
// AssignPrivateIpAddresses: all of them, or none and EC2's
// InsufficientFreeAddressesInSubnet error when the subnet has fewer free.
// DescribeSubnets' AvailableIpAddressCount falls by n.
func (s *Server) AssignAddresses(instanceID string, n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[instanceID]
	if !ok || (in.State != StatePending && in.State != StateRunning) {
		return nil, newError(http.StatusBadRequest, CodeInvalidInstanceIDNotFound, "The instance ID '%s' does not exist", instanceID)
	}
	sn := s.subnetByID(in.SubnetID)
	if sn == nil || n < 0 {
		return nil, fmt.Errorf("ec2 sim: instance %s: cannot assign %d addresses", instanceID, n)
	}
	if sn.available() < n {
		return nil, newError(http.StatusBadRequest, CodeInsufficientFreeAddresses, "%s", insufficientAddresses(sn.id))
	}
	out := make([]string, 0, n)
	for range n {
		ip, err := sn.allocate()
		if err != nil { // only when the block's offsets ran out before its count
			for _, got := range out {
				sn.release(got)
			}
			return nil, newError(http.StatusBadRequest, CodeInsufficientFreeAddresses, "%s", insufficientAddresses(sn.id))
		}
		out = append(out, ip)
	}
	in.SecondaryIPs = append(in.SecondaryIPs, out...)
	return out, nil
}

// UnassignAddresses gives addresses AssignAddresses handed the instance
// back to its subnet (ipamd freeing an ENI); others are ignored.
func (s *Server) UnassignAddresses(instanceID string, ips []string) {
	s.giveBack(instanceID, ips, func(in *instance) *[]string { return &in.SecondaryIPs }, (*subnet).release)
}

// giveBack removes items from the instance's list held and returns each
// to the instance's subnet; items it does not hold are ignored.
func (s *Server) giveBack(instanceID string, items []string, held func(*instance) *[]string, release func(*subnet, string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[instanceID]
	if !ok {
		return
	}
	sn := s.subnetByID(in.SubnetID)
	list := held(in)
	for _, item := range items {
		if i := slices.Index(*list, item); i >= 0 && sn != nil {
			*list = slices.Delete(*list, i, i+1)
			release(sn, item)
		}
	}
}

// SubnetAvailable is the subnet's AvailableIpAddressCount (-1: no such subnet).
func (s *Server) SubnetAvailable(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.subnetByID(id); sn != nil {
		return sn.available()
	}
	return -1
}
