package catalog

// TakesPrefixes reports whether EC2 launches a node of this type whose
// primary interface asks for n IPv4 prefixes (EC2NodeClass
// spec.ipPrefixCount): the interface's IPv4 address slots hold its primary
// address and one per prefix (as Karpenter's network interface check
// counts them), and only Nitro types take prefixes. A type whose limits
// the catalog does not know is given the benefit of the doubt.
func (it *InstanceType) TakesPrefixes(n int32) bool {
	if n <= 0 {
		return true
	}
	if it.Hypervisor == "xen" {
		return false
	}
	return it.IPv4PerENI == 0 || int(n)+1 <= it.IPv4PerENI
}
