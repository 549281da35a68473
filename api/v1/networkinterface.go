package v1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The values of spec.networkInterfaces[].interfaceType (Karpenter's
// InterfaceType): an ENA interface, or an EFA-only one (no IP addresses).
// InterfaceTypeEFA is EC2's combined ENA+EFA type: not a value of the
// field, but what Karpenter's launch templates ask for when pods request
// vpc.amazonaws.com/efa and the class sets no interfaces.
const (
	InterfaceTypeInterface = "interface"
	InterfaceTypeEFAOnly   = "efa-only"
	InterfaceTypeEFA       = "efa"
)

// MaxNetworkInterfaces is the CRD's maxItems of spec.networkInterfaces.
const MaxNetworkInterfaces = 150

// ValidateNetworkInterfaces checks spec.networkInterfaces as Karpenter's
// CRD does (deploy/crds makes the same checks in the API server): at most
// MaxNetworkInterfaces; indices not negative; interfaceType interface or
// efa-only; a primary interface (card 0, device 0, interface) when any is
// set; no (card, device) pair twice and at most one efa-only per card.
func ValidateNetworkInterfaces(nis []NetworkInterface, p *field.Path) field.ErrorList {
	if p == nil {
		p = field.NewPath("spec", "networkInterfaces")
	}
	var errs field.ErrorList
	if len(nis) > MaxNetworkInterfaces {
		errs = append(errs, field.TooMany(p, len(nis), MaxNetworkInterfaces))
	}
	primary := false
	pairs := map[[2]int32]bool{}
	efaOnly := map[int32]bool{}
	pairOrEFA := false
	for i, ni := range nis {
		ip := p.Index(i)
		if ni.NetworkCardIndex < 0 {
			errs = append(errs, field.Invalid(ip.Child("networkCardIndex"), ni.NetworkCardIndex, "should be greater than or equal to 0"))
		}
		if ni.DeviceIndex < 0 {
			errs = append(errs, field.Invalid(ip.Child("deviceIndex"), ni.DeviceIndex, "should be greater than or equal to 0"))
		}
		if ni.InterfaceType != InterfaceTypeInterface && ni.InterfaceType != InterfaceTypeEFAOnly {
			errs = append(errs, field.NotSupported(ip.Child("interfaceType"), ni.InterfaceType, []string{InterfaceTypeInterface, InterfaceTypeEFAOnly}))
		}
		primary = primary || ni.Primary()
		k := [2]int32{ni.NetworkCardIndex, ni.DeviceIndex}
		pairOrEFA = pairOrEFA || pairs[k] || (ni.InterfaceType == InterfaceTypeEFAOnly && efaOnly[ni.NetworkCardIndex])
		pairs[k] = true
		if ni.InterfaceType == InterfaceTypeEFAOnly {
			efaOnly[ni.NetworkCardIndex] = true
		}
	}
	if len(nis) > 0 && !primary {
		errs = append(errs, field.Invalid(p, len(nis), "networkInterfaces must include a primary interface with interfaceType='interface'"))
	}
	if pairOrEFA {
		errs = append(errs, field.Invalid(p, len(nis),
			"networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card"))
	}
	return errs
}

// Primary reports whether the interface is the instance's primary one:
// card 0, device 0, an ENA interface.
func (ni NetworkInterface) Primary() bool {
	return ni.NetworkCardIndex == 0 && ni.DeviceIndex == 0 && ni.InterfaceType == InterfaceTypeInterface
}

// EFAOnlyInterfaces counts the efa-only interfaces of the list, on any
// card (card < 0) or on one card.
func EFAOnlyInterfaces(nis []NetworkInterface, card int32) int {
	n := 0
	for _, ni := range nis {
		if ni.InterfaceType == InterfaceTypeEFAOnly && (card < 0 || ni.NetworkCardIndex == card) {
			n++
		}
	}
	return n
}
