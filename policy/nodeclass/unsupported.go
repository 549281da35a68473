package nodeclass

import (
	"fmt"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Unsupported lists the EC2NodeClass fields that are set but that Joinery
// does not honour, each as "<field>: <why>" in spec order (nil: none). A
// class that sets one does not launch (NotReady says so), rather than
// launching nodes that differ from what the field asks for.
func Unsupported(spec *apiv1.EC2NodeClassSpec) []string {
	if spec == nil {
		return nil
	}
	var out []string
	add := func(field, why string) { out = append(out, field+": "+why) }
	if p := spec.InstanceStorePolicy; p != nil && *p != apiv1.InstanceStorePolicyRAID0 {
		add("spec.instanceStorePolicy", fmt.Sprintf("%q is not a policy (RAID0 is the only one)", *p))
	}
	// A value the CRD's enum refuses (an object stored before the schema,
	// or read from a manifest): EC2 would refuse the launch template.
	if o := spec.CPUOptions; o != nil && o.NestedVirtualization != nil && *o.NestedVirtualization != apiv1.NestedVirtualizationEnabled &&
		*o.NestedVirtualization != apiv1.NestedVirtualizationDisabled {
		add("spec.cpuOptions.nestedVirtualization", fmt.Sprintf("%q is not a value (enabled or disabled)", *o.NestedVirtualization))
	}
	// enabled is required when enclaveOptions is given (the CRD's rule;
	// an object stored before the schema): Karpenter would read it as false.
	if o := spec.EnclaveOptions; o != nil && o.Enabled == nil {
		add("spec.enclaveOptions.enabled", "required when enclaveOptions is set")
	}
	// Invalid reservation terms (the CRD refuses them; an object stored
	// before the schema, or read from a manifest, is caught here).
	for _, e := range apiv1.ValidateCapacityReservationTerms(spec.CapacityReservationSelectorTerms, nil) {
		add(e.Field, e.ErrorBody())
	}
	// The CRD's rules on the selector (an object stored before them).
	if s := spec.PlacementGroupSelector; s != nil && (s.Name == nil) == (s.ID == nil) {
		add("spec.placementGroupSelector", "set exactly one of name and id")
	}
	// Interfaces the CRD refuses (an object stored before the schema, or
	// read from a manifest): Karpenter's rules.
	for _, e := range apiv1.ValidateNetworkInterfaces(spec.NetworkInterfaces, nil) {
		add(e.Field, e.ErrorBody())
	}
	for _, p := range KubeletProblems(spec) {
		add(p.Field, p.Why)
	}
	return out
}

// unsupportedMessage is the ValidationSucceeded condition's message for a
// class with unsupported fields.
func unsupportedMessage(fields []string) string {
	return "fields Joinery does not support: " + strings.Join(fields, "; ")
}

// Refused says why a class may not launch because of the fields it sets
// ("" when none is refused): NotReady's first reason, and `starter plan`'s
// for skipping the class's NodePools.
func Refused(cls *apiv1.EC2NodeClass) string {
	if u := Unsupported(&cls.Spec); len(u) > 0 {
		return fmt.Sprintf("EC2NodeClass %s sets %s", cls.Name, unsupportedMessage(u))
	}
	return ""
}
