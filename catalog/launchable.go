package catalog

import apiv1 "github.com/joinery/joinery/api/v1"

// Launchable reports whether EC2 launches a node of the type as the class
// asks (Karpenter's instance-type compatibility checks): nested
// virtualization enabled needs a type that supports it, and the class's
// IPv4 prefixes a type that takes them (TakesPrefixes), its placement
// group a type the group's strategy takes (SupportsPlacement). A nil class
// asks nothing.
func (it *InstanceType) Launchable(nc *apiv1.EC2NodeClass) bool {
	if nc == nil {
		return true
	}
	if nc.Spec.WantsNestedVirtualization() && !it.NestedVirtualization {
		return false
	}
	if pg := nc.Status.PlacementGroup; pg != nil && !it.SupportsPlacement(pg.Strategy) {
		return false
	}
	return nc.Spec.IPPrefixCount == nil || it.TakesPrefixes(*nc.Spec.IPPrefixCount)
}
