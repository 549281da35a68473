package aws_test

import (
	"testing"

	"github.com/joinery/joinery/providers/aws"
)

// A subnet with no whole free /28 for a class's prefixes
// (InsufficientCidrBlocks) is out of room like one out of addresses: the
// offering is left out for a while and another zone's tried. Errors of the
// request itself are not.
func TestUnfulfillableCodes(t *testing.T) {
	for code, want := range map[string]bool{
		"InsufficientInstanceCapacity": true, "InsufficientFreeAddressesInSubnet": true, "InsufficientCidrBlocks": true,
		"PrivateIpAddressLimitExceeded": false, "InvalidParameterValue": false,
	} {
		if got := aws.IsUnfulfillableCode(code); got != want {
			t.Errorf("%s: %v, want %v", code, got, want)
		}
	}
}
