package catalog

import (
	"sync"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// windowsTypes memoizes For's Windows copies, so each type has one per
// build and options compare by pointer as they do for Linux.
var windowsTypes sync.Map // windowsKey -> *InstanceType

type windowsKey struct {
	it    *InstanceType
	build string
}

// For is the type as the class launches it: itself for a Linux family,
// for a Windows family a copy whose nodes are kubernetes.io/os=windows of
// the family's build (Karpenter's instance-type requirements for a
// Windows AMI family).
func (it *InstanceType) For(nc *apiv1.EC2NodeClass) *InstanceType {
	if nc == nil || it.WindowsBuild != "" {
		return it
	}
	build := nc.Spec.WindowsBuild()
	if build == "" {
		return it
	}
	k := windowsKey{it, build}
	if w, ok := windowsTypes.Load(k); ok {
		return w.(*InstanceType)
	}
	w := *it
	w.WindowsBuild = build
	v, _ := windowsTypes.LoadOrStore(k, &w)
	return v.(*InstanceType)
}

// WindowsMaxPods is a Windows node's pod limit: Windows nodes use one
// network interface, and run as many pods as it has IPv4 addresses less
// the node's own (EKS user guide, "Deploy Windows nodes"); 0 when the
// type's addresses are unknown.
func (it *InstanceType) WindowsMaxPods() int {
	if it.IPv4PerENI <= 1 {
		return 0
	}
	return it.IPv4PerENI - 1
}
