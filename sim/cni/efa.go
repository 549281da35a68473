package cni

// NoAddressInterfaces is a Cloud that also says how many of an instance's
// default-card interfaces carry no IP addresses (efa-only interfaces of
// the launch template): each takes an interface slot ipamd cannot use,
// so the node has that many ENIs fewer for pods (Karpenter's
// ENILimitedPods counts them out the same way).
type NoAddressInterfaces interface {
	NoAddressInterfaces(instanceID string) int
}

// noAddressInterfaces asks cloud when it can tell (0 otherwise).
func noAddressInterfaces(cloud Cloud, id string) int {
	if c, ok := cloud.(NoAddressInterfaces); ok {
		return c.NoAddressInterfaces(id)
	}
	return 0
}
