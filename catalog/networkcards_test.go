package catalog

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

func ni(card, dev int32, typ string) apiv1.NetworkInterface {
	return apiv1.NetworkInterface{NetworkCardIndex: card, DeviceIndex: dev, InterfaceType: typ}
}

var primaryNI = ni(0, 0, apiv1.InterfaceTypeInterface)

func classWith(nis ...apiv1.NetworkInterface) *apiv1.EC2NodeClass {
	return &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{NetworkInterfaces: nis}}
}

// The cards and interfaces per card as DescribeInstanceTypes gives them.
func TestCardENIs(t *testing.T) {
	c := MustDefault()
	for _, tc := range []struct {
		name  string
		cards int
		per   []int // card 0, 1, ...; one past the last is 0
	}{
		{"c5n.18xlarge", 1, []int{15, 0}},
		{"c6in.32xlarge", 2, []int{8, 8, 0}},
		{"p5.48xlarge", 32, []int{2, 2}},
	} {
		it, _ := c.Get(tc.name)
		if it.Cards() != tc.cards {
			t.Errorf("%s: %d cards, want %d", tc.name, it.Cards(), tc.cards)
		}
		for i, want := range tc.per {
			if got := it.CardENIs(i); got != want {
				t.Errorf("%s card %d: %d interfaces, want %d", tc.name, i, got, want)
			}
		}
	}
}

// Karpenter's compatibility checks: the card exists, the device index is
// below the card's limit, the efa-only count within the type's EFA limit.
func TestNetworkInterfacesLaunchable(t *testing.T) {
	c := MustDefault()
	get := func(n string) *InstanceType { it, _ := c.Get(n); return it }
	efa := apiv1.InterfaceTypeEFAOnly
	cases := []struct {
		it   string
		nc   *apiv1.EC2NodeClass
		want string // "" launchable, else a substring of the reason
	}{
		{"m5.large", classWith(primaryNI), ""},
		{"c5n.18xlarge", classWith(primaryNI, ni(0, 1, efa)), ""},
		{"c5n.18xlarge", classWith(primaryNI, ni(0, 14, efa)), ""},
		{"c5n.18xlarge", classWith(primaryNI, ni(0, 15, efa)), "no device index 15"},
		{"c5n.18xlarge", classWith(primaryNI, ni(1, 0, efa)), "no card 1"},
		{"m5.large", classWith(primaryNI, ni(0, 1, efa)), "takes 0 EFA interfaces, not 1"},
		{"m5.large", classWith(primaryNI, ni(0, 3, apiv1.InterfaceTypeInterface)), "no device index 3"},
		{"c6in.32xlarge", classWith(primaryNI, ni(0, 1, efa), ni(1, 0, efa)), ""},
		{"c6in.32xlarge", classWith(primaryNI, ni(0, 1, efa), ni(1, 0, efa), ni(1, 7, apiv1.InterfaceTypeInterface)), ""},
		{"c6in.32xlarge", classWith(primaryNI, ni(1, 8, apiv1.InterfaceTypeInterface)), "no device index 8"},
		{"p5.48xlarge", classWith(primaryNI, ni(0, 1, efa), ni(31, 0, efa)), ""},
		{"p5.48xlarge", classWith(primaryNI, ni(0, 2, efa)), "takes 2 interfaces on card 0"},
	}
	for _, tc := range cases {
		got := get(tc.it).Unlaunchable(tc.nc)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want %q", tc.it, tc.nc.Spec.NetworkInterfaces, got, tc.want)
		}
	}
}

// The shape with interfaces: efa-only interfaces on the default card give
// no pod addresses, the efa resource is their count (Karpenter's
// ENILimitedPods and efas); the node agent's kube-reserved is unchanged.
func TestShapeWithNetworkInterfaces(t *testing.T) {
	c5n, _ := MustDefault().Get("c5n.9xlarge") // 8 interfaces x 30 addresses: 234 pods, 1 EFA
	base := c5n.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{}))
	if base.Capacity[resources.Pods] != 234 || base.Capacity[resources.EFA] != 1 {
		t.Fatalf("c5n.9xlarge: %d pods %d efa, want 234 and 1", base.Capacity[resources.Pods], base.Capacity[resources.EFA])
	}
	for _, tc := range []struct {
		name      string
		nis       []apiv1.NetworkInterface
		pods, efa int64
	}{
		{"primary only", []apiv1.NetworkInterface{primaryNI}, 234, 0},
		{"efa-only on card 0", []apiv1.NetworkInterface{primaryNI, ni(0, 1, apiv1.InterfaceTypeEFAOnly)}, 7*29 + 2, 1},
	} {
		s := c5n.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{NetworkInterfaces: tc.nis}))
		if s.Capacity[resources.Pods] != tc.pods || s.Capacity[resources.EFA] != tc.efa {
			t.Errorf("%s: %d pods %d efa, want %d and %d", tc.name, s.Capacity[resources.Pods], s.Capacity[resources.EFA], tc.pods, tc.efa)
		}
		if got, want := s.Capacity[resources.Memory]-s.Allocatable[resources.Memory], base.Capacity[resources.Memory]-base.Allocatable[resources.Memory]; got != want {
			t.Errorf("%s: memory reserved %d, want the type's %d", tc.name, got, want)
		}
	}
	// An efa-only interface on another card keeps the default card's
	// addresses (c6in.32xlarge: 8 interfaces on card 0, 394 pods).
	c6in, _ := MustDefault().Get("c6in.32xlarge")
	s := c6in.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{NetworkInterfaces: []apiv1.NetworkInterface{primaryNI, ni(1, 0, apiv1.InterfaceTypeEFAOnly)}}))
	if s.Capacity[resources.Pods] != 394 || s.Capacity[resources.EFA] != 1 {
		t.Errorf("c6in.32xlarge efa-only on card 1: %d pods %d efa, want 394 and 1", s.Capacity[resources.Pods], s.Capacity[resources.EFA])
	}
}
