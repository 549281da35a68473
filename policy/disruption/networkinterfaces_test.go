package disruption

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// spec.networkInterfaces is part of the class's drift hash, as in
// Karpenter's (the field is not hash:"ignore"): a change drifts the nodes.
func TestNetworkInterfacesDriftTheClass(t *testing.T) {
	cls := &apiv1.EC2NodeClass{}
	plain := NodeClassHash(cls)
	cls.Spec.NetworkInterfaces = []apiv1.NetworkInterface{{InterfaceType: apiv1.InterfaceTypeInterface}}
	primary := NodeClassHash(cls)
	cls.Spec.NetworkInterfaces = append(cls.Spec.NetworkInterfaces, apiv1.NetworkInterface{DeviceIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly})
	efa := NodeClassHash(cls)
	if plain == primary || primary == efa || plain == efa {
		t.Errorf("hashes %s %s %s, want three different", plain, primary, efa)
	}
}
