package ec2

import (
	"fmt"

	"github.com/joinery/joinery/catalog"
)

// DefaultVCPUQuota is the local account's vCPU quota in every bucket, for
// On-Demand and for Spot: an account whose quotas were raised for a
// production cluster. A new AWS account starts far lower (5 Standard
// vCPUs); SetVCPUQuota sets one bucket's.
const DefaultVCPUQuota = 10000

// The per-override codes of a launch past the account's vCPU quota.
const (
	CodeVcpuLimitExceeded            = "VcpuLimitExceeded"
	CodeMaxSpotInstanceCountExceeded = "MaxSpotInstanceCountExceeded"
)

// quotaKey is one vCPU quota: a bucket of families (catalog.QuotaBucket)
// for a capacity type ("on-demand" or "spot").
type quotaKey struct{ bucket, capacityType string }

// SetVCPUQuota sets the vCPUs the account may run in bucket (a
// catalog.QuotaBucket name: "standard", "g", "p"...) as capacityType; a
// negative n restores Options.VCPUQuota.
func (s *Server) SetVCPUQuota(bucket, capacityType string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := quotaKey{bucket, capacityType}
	if n < 0 {
		delete(s.quotas, k)
	} else {
		s.quotas[k] = n
	}
}

func (s *Server) quotaLocked(k quotaKey) int {
	if n, ok := s.quotas[k]; ok {
		return n
	}
	return s.opts.VCPUQuota
}

// vcpusInUseLocked sums the vCPUs the quota counts: every instance of its
// bucket and capacity type not yet terminated. Instances in a capacity
// reservation are left out: the reservation itself holds their share.
func (s *Server) vcpusInUseLocked(k quotaKey) int {
	n := 0
	for _, in := range s.instances {
		if in.State == StateTerminated || in.CapacityType != k.capacityType || in.CapacityReservationID != "" ||
			catalog.QuotaBucket(in.InstanceType) != k.bucket {
			continue
		}
		if it, ok := s.opts.Catalog.Get(in.InstanceType); ok {
			n += it.VCPU
		}
	}
	return n
}

// quotaCodeLocked returns the error a launch of it as capacityType gets
// when it would pass the account's vCPU quota ("" when it fits). used
// memoizes the vCPUs in use per quota for one CreateFleet request.
func (s *Server) quotaCodeLocked(it *catalog.InstanceType, capacityType string, used map[quotaKey]int) (code, msg string) {
	k := quotaKey{catalog.QuotaBucket(it.Name), capacityType}
	n, ok := used[k]
	if !ok {
		n = s.vcpusInUseLocked(k)
		used[k] = n
	}
	limit := s.quotaLocked(k)
	if n+it.VCPU <= limit {
		return "", ""
	}
	if capacityType == CapacityTypeSpot {
		return CodeMaxSpotInstanceCountExceeded, "Max spot instance count exceeded"
	}
	return CodeVcpuLimitExceeded, fmt.Sprintf("You have requested more vCPU capacity than your current vCPU limit of %d allows for the "+
		"instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to "+
		"request an adjustment to this limit.", limit)
}
