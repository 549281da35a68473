package activities

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// spec.ipPrefixCount reaches the launch template as the primary
// interface's Ipv4PrefixCount and the instance gets the prefixes.
func TestLaunchCarriesTheClassPrefixCount(t *testing.T) {
	n := int32(2)
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
		func(cls *apiv1.EC2NodeClass, _ *apiv1.NodeClaim) { cls.Spec.IPPrefixCount = &n })
	out, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := srv.Instance(out.ID)
	lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
	if c := lt.Data.IPv4PrefixCount; c == nil || *c != 2 || lt.Data.IPv6PrefixCount != nil || len(inst.IPv4Prefixes) != 2 {
		t.Errorf("template counts %v/%v, instance prefixes %v", lt.Data.IPv4PrefixCount, lt.Data.IPv6PrefixCount, inst.IPv4Prefixes)
	}
}

// The count goes to Ipv6PrefixCount in an IPv6 cluster (kube-dns has an
// IPv6 address), as Karpenter picks by the cluster's IP family.
func TestPrefixCountsFollowTheClusterIPFamily(t *testing.T) {
	n := int32(3)
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{IPPrefixCount: &n}}
	for _, tc := range []struct {
		dns    string
		v4, v6 bool
	}{{"10.100.0.10", true, false}, {"", true, false}, {"fd00:10:96::a", false, true}} {
		v4, v6 := prefixCounts(cls, tc.dns)
		if (v4 != nil) != tc.v4 || (v6 != nil) != tc.v6 || (v4 != nil && *v4 != 3) || (v6 != nil && *v6 != 3) {
			t.Errorf("kube-dns %q: v4 %v v6 %v", tc.dns, v4, v6)
		}
	}
	if v4, v6 := prefixCounts(&apiv1.EC2NodeClass{}, "10.100.0.10"); v4 != nil || v6 != nil {
		t.Errorf("no count: %v %v", v4, v6)
	}
}
