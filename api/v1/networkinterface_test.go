package v1

import (
	"strings"
	"testing"
)

// Karpenter's CEL rules on spec.networkInterfaces, case by case.
func TestValidateNetworkInterfaces(t *testing.T) {
	ni := func(card, dev int32, typ string) NetworkInterface {
		return NetworkInterface{NetworkCardIndex: card, DeviceIndex: dev, InterfaceType: typ}
	}
	primary := ni(0, 0, InterfaceTypeInterface)
	cases := []struct {
		name string
		nis  []NetworkInterface
		want string // substring of the one error; "" valid
	}{
		{"none", nil, ""},
		{"primary alone", []NetworkInterface{primary}, ""},
		{"p5 style", []NetworkInterface{primary, ni(0, 1, InterfaceTypeEFAOnly), ni(1, 0, InterfaceTypeEFAOnly), ni(2, 0, InterfaceTypeEFAOnly)}, ""},
		{"interfaces on other cards", []NetworkInterface{primary, ni(1, 0, InterfaceTypeInterface), ni(1, 1, InterfaceTypeEFAOnly)}, ""},
		{"no primary", []NetworkInterface{ni(0, 1, InterfaceTypeEFAOnly)}, "must include a primary interface"},
		{"efa-only primary", []NetworkInterface{ni(0, 0, InterfaceTypeEFAOnly)}, "must include a primary interface"},
		{"primary on card 1", []NetworkInterface{ni(1, 0, InterfaceTypeInterface)}, "must include a primary interface"},
		{"duplicate pair", []NetworkInterface{primary, ni(1, 0, InterfaceTypeInterface), ni(1, 0, InterfaceTypeEFAOnly)}, "duplicate networkCardIndex and deviceIndex"},
		{"two efa-only on a card", []NetworkInterface{primary, ni(0, 1, InterfaceTypeEFAOnly), ni(0, 2, InterfaceTypeEFAOnly)}, "at most one efa device per network card"},
		{"efa type", []NetworkInterface{primary, ni(1, 0, InterfaceTypeEFA)}, `Unsupported value: "efa"`},
		{"negative device", []NetworkInterface{primary, ni(1, -1, InterfaceTypeInterface)}, "deviceIndex"},
		{"negative card", []NetworkInterface{primary, ni(-1, 0, InterfaceTypeInterface)}, "networkCardIndex"},
		{"too many", make([]NetworkInterface, MaxNetworkInterfaces+1), "must have at most 150 items"},
	}
	for _, c := range cases {
		errs := ValidateNetworkInterfaces(c.nis, nil)
		if c.want == "" {
			if len(errs) > 0 {
				t.Errorf("%s: %v", c.name, errs)
			}
			continue
		}
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, errs, c.want)
		}
		if !strings.HasPrefix(errs[0].Field, "spec.networkInterfaces") {
			t.Errorf("%s: field %s", c.name, errs[0].Field)
		}
	}
}
