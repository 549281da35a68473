package ec2

import (
	"fmt"

	"github.com/joinery/joinery/catalog"
)

// The values of CpuOptions.NestedVirtualization (EC2's
// NestedVirtualizationSpecification).
const (
	NestedVirtualizationEnabled  = "enabled"
	NestedVirtualizationDisabled = "disabled"
)

// cpuOptions reads a launch template's CpuOptions.NestedVirtualization,
// refusing a value EC2 does not have. Which types support it is checked at
// launch (the template names none): checkLaunchInputsLocked.
func cpuOptions(f form, p string, d *LaunchTemplateData) error {
	v := f.get(p + ".CpuOptions.NestedVirtualization")
	switch v {
	case "", NestedVirtualizationEnabled, NestedVirtualizationDisabled:
		d.NestedVirtualization = v
		return nil
	}
	return invalidParameter("Value (%s) for parameter NestedVirtualization is invalid. Valid values are enabled and disabled.", v)
}

// nestedVirtualizationUnsupported is EC2's refusal of a launch with nested
// virtualization enabled on a type that does not support it (error code
// UnsupportedOperation, as Karpenter's design for the field reports; the
// wording is the endpoint's own).
func nestedVirtualizationUnsupported(instanceType string) string {
	return fmt.Sprintf("The instance type '%s' does not support nested virtualization.", instanceType)
}

// processorFeatures are the type's ProcessorInfo.SupportedFeatures as the
// catalog knows them.
func processorFeatures(it *catalog.InstanceType) []string {
	if it.NestedVirtualization {
		return []string{"nested-virtualization"}
	}
	return nil
}
