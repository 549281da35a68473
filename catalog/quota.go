package catalog

import "strings"

// QuotaBucket names the vCPU quota an instance type counts against: EC2
// limits the vCPUs of running On-Demand instances, and of Spot requests,
// per bucket of families (AWS EC2 User Guide, "Amazon EC2 instance type
// quotas": Standard (A, C, D, H, I, M, R, T, Z), F, G and VT, Inf, P, X,
// DL, Trn, HPC, High Memory (U)). A type of any other family is its own
// bucket.
func QuotaBucket(instanceType string) string {
	family, _, _ := strings.Cut(instanceType, ".")
	prefix, _, _ := strings.Cut(family, "-")
	if i := strings.IndexAny(prefix, "0123456789"); i >= 0 {
		prefix = prefix[:i]
	}
	switch prefix {
	case "inf", "dl", "trn", "hpc", "mac", "u":
		return prefix
	case "vt", "gr":
		return "g"
	}
	if prefix == "" {
		return family
	}
	switch prefix[0] {
	case 'a', 'c', 'd', 'h', 'i', 'm', 'r', 't', 'z':
		return "standard"
	case 'f', 'g', 'p', 'x':
		return prefix[:1]
	}
	return prefix
}
