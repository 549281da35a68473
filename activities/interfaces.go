package activities

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
)

// launchInterfaces is what a launch template of one instance type carries
// for its network interfaces besides the class's spec.networkInterfaces:
// the EFA interfaces a NodeClaim that requests vpc.amazonaws.com/efa gets
// when the class sets none, and the pods the node may run when efa-only
// interfaces take addresses from the default card. Types that differ in
// either get templates of their own, as Karpenter splits its templates by
// EFA count and max pods.
type launchInterfaces struct {
	EFA     int
	MaxPods int32
}

// interfacesFor is the launchInterfaces of a NodeClaim's launch of the
// type: EFA as Karpenter's getEFACountForInstance (the NodeClaim requests
// the resource and the class sets no interfaces: the type's EFA limit,
// one interface per card), MaxPods its ENI-limited pods without the
// default card's efa-only interfaces (catalog InterfacePods), 0 when those
// are none or spec.kubelet.maxPods is set.
func interfacesFor(nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, it *catalog.InstanceType) launchInterfaces {
	var out launchInterfaces
	if _, asks := nc.Spec.Resources.Requests[resources.Names[resources.EFA]]; asks && len(cls.Spec.NetworkInterfaces) == 0 {
		out.EFA = it.EFACount
	}
	if k := cls.Spec.Kubelet; k == nil || k.MaxPods == nil {
		if pods, ok := it.InterfacePods(cls.Spec.NetworkInterfaces); ok {
			out.MaxPods = int32(pods)
		}
	}
	return out
}
