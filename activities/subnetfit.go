package activities

import (
	"context"
	"errors"
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/subnets"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// CodeInsufficientFreeAddresses is EC2's error for a subnet without enough
// free addresses; a launch answers it too for a subnet predicted short.
const CodeInsufficientFreeAddresses = "InsufficientFreeAddressesInSubnet"

// CodeInsufficientCidrBlocks is EC2's error for a subnet with no whole
// free /28 left for the prefixes a launch asks for (spec.ipPrefixCount).
const CodeInsufficientCidrBlocks = "InsufficientCidrBlocks"

// addressNeedOf is the addresses a node of the offering's type takes with
// the request's pods under the VPC CNI's defaults, plus the /28 prefixes
// the class has EC2 delegate at launch (0 for a type the catalog does not
// know: the plan skips it anyway).
func (a *Launch) addressNeedOf(cls *apiv1.EC2NodeClass, instanceType string, pods int) int {
	it, ok := a.types.Get(instanceType)
	if !ok {
		return 0
	}
	return subnets.NodeAddresses(it.DefaultCardMaxENIs, it.IPv4PerENI, pods) + subnets.PrefixAddresses(cls.Spec.IPPrefixCount)
}

// addressFit marks which of the request's offerings the chosen subnet of
// their zone can hold (its free addresses, net of launches in flight,
// cover the node's warm pool and planned pods) and reserves the addresses
// in lp.Reserved. The offerings that cannot are left out of the plan for
// a while (the ICE cache) with an Event on the EC2NodeClass; short is
// the error naming them (nil when none).
func (a *Launch) addressFit(ctx context.Context, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, lp *launchPlan) ([]bool, *aws.InsufficientCapacityError) {
	needs := make([]addressNeed, len(req.Offerings))
	for i, o := range req.Offerings {
		needs[i] = addressNeed{Zone: o.Zone, Need: a.addressNeedOf(cls, o.InstanceType, req.Pods)}
	}
	fits, free, reserved := a.subnets.fit(cls.Name, lp.Subnet, needs)
	lp.Reserved = reserved
	var short *aws.InsufficientCapacityError
	for i, o := range req.Offerings {
		if fits[i] {
			continue
		}
		if short == nil {
			short = &aws.InsufficientCapacityError{}
		}
		key := aws.OfferingKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}
		msg := fmt.Sprintf("subnet %s has %d free addresses, a %s node with %d pods takes %d", lp.Subnet[o.Zone], free[o.Zone], o.InstanceType, req.Pods, needs[i].Need)
		short.Offerings = append(short.Offerings, key)
		short.Errors = append(short.Errors, aws.FleetError{Offering: key, Code: CodeInsufficientFreeAddresses, Message: msg})
		a.ice.MarkUnavailable(o.InstanceType, o.Zone, req.CapacityType)
	}
	if short != nil {
		a.subnetShort(ctx, cls, short)
	}
	return fits, short
}

// subnetShort tells the operator a zone's subnet cannot hold the nodes
// planned there: a Warning Event on the EC2NodeClass and a log line.
func (a *Launch) subnetShort(ctx context.Context, cls *apiv1.EC2NodeClass, short *aws.InsufficientCapacityError) {
	seen := map[string]bool{}
	for _, fe := range short.Errors {
		if seen[fe.Offering.Zone] {
			continue
		}
		seen[fe.Offering.Zone] = true
		activityLogger(ctx, a.log).Warn("subnet short of addresses: zone left out of the launch", zap.String("nodeclass", cls.Name),
			zap.String("zone", fe.Offering.Zone), zap.String("why", fe.Message))
		if a.cluster.Recorder != nil {
			a.cluster.Recorder.Event(&corev1.ObjectReference{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: cls.Name, UID: cls.UID},
				corev1.EventTypeWarning, ReasonSubnetFull, fmt.Sprintf("zone %s left out of launches for now: %s", fe.Offering.Zone, fe.Message))
		}
	}
}

// ReasonSubnetFull is the Event reason of a subnet too short of addresses
// for a planned node.
const ReasonSubnetFull = "InsufficientFreeAddressesInSubnet"

// settleAddresses ends the launch's address reservation: the subnet the
// instance went to keeps its predicted addresses in flight, and a subnet
// EC2 said is out of addresses (or of whole /28 blocks for prefixes) is
// left out for a while.
func (a *Launch) settleAddresses(cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, lp launchPlan, inst aws.Instance, err error) {
	launched, need := "", 0
	if err == nil {
		launched, need = lp.Subnet[inst.Zone], a.addressNeedOf(cls, inst.Type, req.Pods)
	}
	a.subnets.settle(cls.Name, lp.Reserved, launched, need)
	var ice *aws.InsufficientCapacityError
	if errors.As(err, &ice) {
		for _, fe := range ice.Errors {
			if fe.Code == CodeInsufficientFreeAddresses || fe.Code == CodeInsufficientCidrBlocks {
				a.subnets.leaveOut(lp.Subnet[fe.Offering.Zone])
			}
		}
	}
}
