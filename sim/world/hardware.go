package world

import (
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/kubelet"
)

// hardware is an instance type as the local EC2 endpoint describes it,
// handed to the local kubelet, which sizes the Node from it alone.
func (w *World) hardware(name string, memTotal map[string]int64) (kubelet.Hardware, bool) {
	it, ok := w.EC2.Options().Catalog.Get(name)
	if !ok {
		return kubelet.Hardware{}, false
	}
	h := kubelet.Hardware{
		Name: it.Name, Arch: it.Arch, VCPU: it.VCPU, MemoryMiB: it.MemoryMiB, MemTotalMiB: memTotal[name],
		Hypervisor: it.Hypervisor, BareMetal: it.BareMetal,
		DefaultCardENIs: it.DefaultCardMaxENIs, IPv4PerENI: it.IPv4PerENI,
		Neuron: it.AcceleratorCount, EFA: it.EFACount, LocalNVMeGB: it.LocalNVMeGB,
		MaxEBSAttachments: it.MaxEBSAttachments, EBSAttachmentType: it.EBSAttachmentType,
	}
	switch it.GPUManufacturer {
	case "nvidia":
		h.NvidiaGPUs = it.GPUCount
	case "amd":
		h.AMDGPUs = it.GPUCount
	}
	if it.AcceleratorManufacturer != "aws" {
		h.Neuron = 0
	}
	return h, true
}

// asSeenByNode is an instance as its instance metadata shows it.
func asSeenByNode(i ec2.Instance) kubelet.Instance {
	out := kubelet.Instance{ID: i.ID, InstanceType: i.InstanceType, Zone: i.Zone, PrivateDNSName: i.PrivateDNSName,
		ImageID: i.ImageID, UserData: i.UserData, NetworkInterfaces: i.NetworkInterfaces, EFAInterfaces: i.EFAInterfaces()}
	for _, b := range i.BlockDevices {
		out.BlockDevices = append(out.BlockDevices, kubelet.BlockDevice{DeviceName: b.DeviceName, VolumeSize: b.VolumeSize})
	}
	return out
}
