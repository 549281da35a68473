package catalog

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// A class with connection tracking timeouts launches Nitro types only, as
// Karpenter's compatibility check: not Xen, not bare metal; without them
// every type stays.
func TestConnectionTrackingNeedsNitro(t *testing.T) {
	c := MustDefault()
	timeout := int32(60)
	tracked := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{ConnectionTracking: &apiv1.ConnectionTracking{TCPEstablishedTimeout: &timeout}}}
	for name, want := range map[string]bool{"m5.large": true, "c6g.large": true, "m4.large": false, "t2.micro": false, "m5.metal": false} {
		it, ok := c.Get(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		why := it.Unlaunchable(tracked)
		if (why == "") != want {
			t.Errorf("%s (hypervisor %q) with connection tracking: %q, want launchable %v", name, it.Hypervisor, why, want)
		}
		if !want && !strings.Contains(why, "spec.connectionTracking") {
			t.Errorf("%s: reason %q names no field", name, why)
		}
		if !it.Launchable(&apiv1.EC2NodeClass{}) {
			t.Errorf("%s refused by a class without connection tracking", name)
		}
	}
}
