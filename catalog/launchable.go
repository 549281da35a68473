package catalog

import (
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Launchable reports whether EC2 launches a node of the type as the class
// asks (Karpenter's instance-type compatibility checks; Unlaunchable says
// why not). A nil class asks nothing.
func (it *InstanceType) Launchable(nc *apiv1.EC2NodeClass) bool { return it.Unlaunchable(nc) == "" }

// Unlaunchable is why the class cannot launch the type, "" when it can:
// nested virtualization enabled needs a type that supports it, as do Nitro
// Enclaves enabled (spec.enclaveOptions); the class's IPv4 prefixes a type
// that takes them (TakesPrefixes), a Windows family
// an amd64 type (EKS's Windows images are x86_64 only), the class's
// network interfaces a type with their cards, devices and EFA interfaces,
// its placement group a type the group's strategy takes (SupportsPlacement),
// connection tracking timeouts a Nitro type (Karpenter's
// connectionTrackingCompatibility: bare metal, which has no hypervisor,
// is left out too), a kubelet expression that evaluates for the type
// (ResolveKubelet: a negative or out-of-range result names the type).
func (it *InstanceType) Unlaunchable(nc *apiv1.EC2NodeClass) string {
	switch {
	case nc == nil:
		return ""
	case nc.Spec.WantsNestedVirtualization() && !it.NestedVirtualization:
		return "does not support nested virtualization (spec.cpuOptions)"
	case nc.Spec.WantsEnclaves() && !it.NitroEnclaves:
		return "does not support Nitro Enclaves (spec.enclaveOptions)"
	case nc.Spec.IPPrefixCount != nil && !it.TakesPrefixes(*nc.Spec.IPPrefixCount):
		return fmt.Sprintf("cannot take %d IPv4 prefixes (spec.ipPrefixCount)", *nc.Spec.IPPrefixCount)
	case nc.Spec.WindowsBuild() != "" && it.Arch != "amd64":
		return "is " + it.Arch + ": the Windows images are x86_64 only"
	case nc.Spec.ConnectionTracking != nil && it.Hypervisor != "nitro":
		return "is not a Nitro type: connection tracking timeouts need one (spec.connectionTracking)"
	case nc.Status.PlacementGroup != nil && !it.SupportsPlacement(nc.Status.PlacementGroup.Strategy):
		return "is not launched into " + nc.Status.PlacementGroup.Strategy + " placement groups (spec.placementGroupSelector)"
	}
	if _, err := it.ResolveKubelet(Launch{Kubelet: nc.Spec.Kubelet, NetworkInterfaces: nc.Spec.NetworkInterfaces}); err != nil {
		return err.Error()
	}
	return it.interfacesUnlaunchable(nc.Spec.NetworkInterfaces)
}
