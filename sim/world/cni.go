package world

import (
	"context"

	"github.com/joinery/joinery/sim/cni"
	"github.com/joinery/joinery/sim/ec2"
	"k8s.io/client-go/kubernetes"
)

// startCNI runs the VPC CNI on the world's nodes: addresses come from the
// local EC2's subnets, a type's ENI limits from what DescribeInstanceTypes
// says of it.
func (w *World) startCNI(ctx context.Context, kc kubernetes.Interface, o Options) (*cni.CNI, error) {
	return cni.Start(ctx, cni.Options{
		Kube: kc, Cloud: ec2Addresses{w.EC2}, Settings: o.CNI, Log: o.Log.Named("sim-cni"),
		Limits: func(name string) (cni.Limits, bool) {
			it, ok := w.EC2.Options().Catalog.Get(name)
			return cni.Limits{ENIs: it.DefaultCardMaxENIs, IPv4PerENI: it.IPv4PerENI}, ok
		},
	})
}

// ec2Addresses is the local EC2 as ipamd sees it.
type ec2Addresses struct{ s *ec2.Server }

func (e ec2Addresses) Instance(id string) (string, []string, bool) {
	in, ok := e.s.Instance(id)
	if !ok || (in.State != ec2.StatePending && in.State != ec2.StateRunning) {
		return "", nil, false
	}
	return in.InstanceType, in.SecondaryIPs, true
}

// NoAddressInterfaces is how many of the instance's default-card
// interfaces are efa-only (cni.NoAddressInterfaces).
func (e ec2Addresses) NoAddressInterfaces(id string) int {
	in, _ := e.s.Instance(id)
	return in.NoAddressInterfaces()
}

func (e ec2Addresses) AssignAddresses(id string, n int) ([]string, error) {
	return e.s.AssignAddresses(id, n)
}

func (e ec2Addresses) UnassignAddresses(id string, ips []string) { e.s.UnassignAddresses(id, ips) }

func (e ec2Addresses) Prefixes(id string) []string {
	in, ok := e.s.Instance(id)
	if !ok {
		return nil
	}
	return in.IPv4Prefixes
}

func (e ec2Addresses) UnassignPrefixes(id string, prefixes []string) {
	e.s.UnassignPrefixes(id, prefixes)
}
