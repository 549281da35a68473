package catalog

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// The embedded catalog marks the documented families' virtual sizes as
// supporting nested virtualization, and nothing else: not their metal
// sizes, not the other 8th generation Intel families AWS does not name.
func TestEmbeddedNestedVirtualization(t *testing.T) {
	c := MustDefault()
	for name, want := range map[string]bool{
		"c8i.large": true, "m8i-flex.xlarge": true, "r8i.96xlarge": true,
		"c8i.metal-48xl": false, "m5.large": false, "c8id.large": false, "m7i.large": false, "x8i.large": false,
	} {
		it, ok := c.Get(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		if it.NestedVirtualization != want {
			t.Errorf("%s nested virtualization %v, want %v", name, it.NestedVirtualization, want)
		}
	}
	n := 0
	for _, it := range c.Types {
		if it.NestedVirtualization {
			n++
		}
	}
	if n < 30 {
		t.Errorf("%d types support nested virtualization", n)
	}
	if err := New(nil).SetNestedVirtualization([]byte("family,source\nc8i,\n")); err == nil || !strings.Contains(err.Error(), "source") {
		t.Errorf("a row without its source: %v", err)
	}
}

// Launchable is Karpenter's compatibility check: only a class enabling
// nested virtualization narrows the types.
func TestLaunchableNestedVirtualization(t *testing.T) {
	c := MustDefault()
	yes, _ := c.Get("m8i.large")
	no, _ := c.Get("m5.large")
	cls := func(v *string) *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{CPUOptions: &apiv1.CPUOptions{NestedVirtualization: v}}}
	}
	enabled, disabled := apiv1.NestedVirtualizationEnabled, apiv1.NestedVirtualizationDisabled
	for _, tc := range []struct {
		name string
		cls  *apiv1.EC2NodeClass
		no   bool
	}{
		{"no class", nil, true}, {"no cpuOptions", &apiv1.EC2NodeClass{}, true}, {"empty cpuOptions", cls(nil), true},
		{"disabled", cls(&disabled), true}, {"enabled", cls(&enabled), false},
	} {
		if !yes.Launchable(tc.cls) {
			t.Errorf("%s: m8i.large refused", tc.name)
		}
		if no.Launchable(tc.cls) != tc.no {
			t.Errorf("%s: m5.large launchable %v, want %v", tc.name, no.Launchable(tc.cls), tc.no)
		}
	}
}
