package aws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// templateInterfaces are the launch template's network interfaces, as
// Karpenter's generateNetworkInterfaces builds them:
//   - the class's interfaces, each on its card and device with its type and
//     the security groups; the public IP choice, prefixes and connection
//     tracking only on ENA interfaces (EC2 refuses them on efa-only ones);
//   - else, for a NodeClaim requesting EFA, one "efa" interface per card up
//     to the count, device 0 on card 0 and device 1 on the others, each
//     with the primary interface's settings;
//   - else one primary interface (device 0) when there is anything to put
//     on it (nil: EC2's default interface).
func templateInterfaces(d LaunchTemplateData) []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
	ena := func(device int32) types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
		return types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			DeviceIndex: aws.Int32(device), Groups: append([]string(nil), d.SecurityGroupIDs...),
			AssociatePublicIpAddress: d.AssociatePublicIPAddress, ConnectionTrackingSpecification: connectionTracking(d.ConnectionTracking),
			Ipv4PrefixCount: d.IPv4PrefixCount, Ipv6PrefixCount: d.IPv6PrefixCount,
		}
	}
	var out []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest
	switch {
	case len(d.NetworkInterfaces) > 0:
		for _, ni := range d.NetworkInterfaces {
			r := ena(ni.DeviceIndex)
			if ni.InterfaceType == apiv1.InterfaceTypeEFAOnly {
				r = types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{DeviceIndex: aws.Int32(ni.DeviceIndex), Groups: r.Groups}
			}
			r.NetworkCardIndex, r.InterfaceType = aws.Int32(ni.NetworkCardIndex), aws.String(ni.InterfaceType)
			out = append(out, r)
		}
	case d.EFAInterfaces > 0:
		for i := range int32(d.EFAInterfaces) {
			r := ena(min(i, 1))
			r.NetworkCardIndex, r.InterfaceType = aws.Int32(i), aws.String(apiv1.InterfaceTypeEFA)
			out = append(out, r)
		}
	case len(d.SecurityGroupIDs) > 0 || d.AssociatePublicIPAddress != nil || d.ConnectionTracking != nil ||
		d.IPv4PrefixCount != nil || d.IPv6PrefixCount != nil:
		out = append(out, ena(0))
	}
	return out
}
