package catalog

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// spec.ipPrefixCount leaves the pods a node holds as they were, as in
// Karpenter (its pods() and ENILimitedPods never read the field; a real
// node's kubelet takes maxPods from the user data, which carries this
// count): the ENI-limited secondary-address figure, not the VPC CNI's
// prefix-delegation one (ENIs × (IPv4 per ENI − 1) × 16 + 2, capped at
// 110, or 250 above 30 vCPUs: max-pods-calculator.sh), which holds only
// when aws-node runs with ENABLE_PREFIX_DELEGATION, a setting the class
// does not see.
func TestPodsIgnoreTheClassPrefixCount(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	four := int32(4)
	for _, tc := range []struct {
		name           string
		eniPods, pdCNI int64
	}{{"m5.large", 29, 110}, {"m5.xlarge", 58, 110}, {"t3.small", 11, 110}, {"c5.large", 29, 110}, {"m6i.8xlarge", 234, 250}} {
		it, ok := c.Get(tc.name)
		if !ok {
			t.Fatalf("%s not in the catalog", tc.name)
		}
		with := it.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{AMIFamily: "AL2023", IPPrefixCount: &four}))
		without := it.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{AMIFamily: "AL2023"}))
		if got := with.Capacity[resources.Pods]; got != tc.eniPods || with != without {
			t.Errorf("%s with 4 prefixes: %d pods (shape equal without: %v), want the ENI-limited %d", tc.name, got, with == without, tc.eniPods)
		}
		if pd := prefixDelegationMaxPods(it); pd != tc.pdCNI {
			t.Errorf("%s: the CNI's prefix-delegation max pods %d, want %d", tc.name, pd, tc.pdCNI)
		}
	}
}

// prefixDelegationMaxPods is max-pods-calculator.sh with prefix
// delegation: what the figure would be had Joinery counted prefixes.
func prefixDelegationMaxPods(it *InstanceType) int64 {
	pods := int64(it.DefaultCardMaxENIs*(it.IPv4PerENI-1)*16 + 2)
	limit := int64(110)
	if it.VCPU > 30 {
		limit = 250
	}
	return min(pods, limit)
}
