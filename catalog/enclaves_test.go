package catalog

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// The embedded catalog follows AWS's parent instance requirements as a
// floor: virtualized Nitro, 4 vCPUs (Intel, AMD) or 2 (Graviton), not an
// excluded family, nothing newer than the rule speaks to, no accelerator.
func TestEmbeddedNitroEnclaves(t *testing.T) {
	c := MustDefault()
	for name, want := range map[string]bool{
		"m5.xlarge": true, "c6g.large": true, "r6i.2xlarge": true, "m5a.xlarge": true, "c7g.xlarge": true,
		"m5.large":           false, // 2 Intel vCPUs
		"c6g.medium":         false, // 1 Graviton vCPU
		"m5.metal":           false, // bare metal
		"i3.xlarge":          false, // Xen
		"t3.xlarge":          false, // excluded family
		"t4g.xlarge":         false,
		"m7i.2xlarge":        false,
		"m7g.xlarge":         false,
		"u-6tb1.56xlarge":    false, // U-*
		"u7i-12tb.224xlarge": false, // generation 7, not documented
		"m8i.xlarge":         false, // newer than the rule
		"g4dn.xlarge":        false, // accelerated: the floor refuses
		"inf1.xlarge":        false,
	} {
		it, ok := c.Get(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		if it.NitroEnclaves != want {
			t.Errorf("%s Nitro Enclaves %v, want %v", name, it.NitroEnclaves, want)
		}
	}
	n := 0
	for _, it := range c.Types {
		if it.NitroEnclaves {
			n++
		}
	}
	if n < 300 {
		t.Errorf("%d types support Nitro Enclaves", n)
	}
	for csv, want := range map[string]string{
		"family,enclaves,source\nt3,excluded,\n":   "source",
		"family,enclaves,source\nt3,maybe,guide\n": "neither excluded nor documented",
	} {
		if err := New(nil).SetNitroEnclaves([]byte(csv)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", csv, err, want)
		}
	}
}

// Launchable is Karpenter's nitroEnclavesCompatibility: only a class that
// enables enclaves narrows the types.
func TestLaunchableNitroEnclaves(t *testing.T) {
	c := MustDefault()
	yes, _ := c.Get("m5.xlarge")
	no, _ := c.Get("t3.xlarge")
	on, off := true, false
	cls := func(o *apiv1.EnclaveOptions) *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{EnclaveOptions: o}}
	}
	for _, tc := range []struct {
		name string
		cls  *apiv1.EC2NodeClass
		no   bool
	}{
		{"no class", nil, true}, {"no enclaveOptions", cls(nil), true},
		{"disabled", cls(&apiv1.EnclaveOptions{Enabled: &off}), true}, {"enabled", cls(&apiv1.EnclaveOptions{Enabled: &on}), false},
	} {
		if !yes.Launchable(tc.cls) {
			t.Errorf("%s: m5.xlarge refused", tc.name)
		}
		if no.Launchable(tc.cls) != tc.no {
			t.Errorf("%s: t3.xlarge launchable %v, want %v", tc.name, no.Launchable(tc.cls), tc.no)
		}
	}
	if why := no.Unlaunchable(cls(&apiv1.EnclaveOptions{Enabled: &on})); why != "does not support Nitro Enclaves (spec.enclaveOptions)" {
		t.Errorf("t3.xlarge: %q", why)
	}
}
