package ec2_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/sim/ec2"
)

// prefixTemplate creates a launch template whose primary interface asks
// for n IPv4 prefixes.
func prefixTemplate(t *testing.T, srv *ec2.Server, c *sdkec2.Client, name string, n int32) {
	t.Helper()
	createLT(t, c, name, &types.RequestLaunchTemplateData{ImageId: aws.String(recommended(t, srv, "x86_64", "standard")),
		NetworkInterfaces: []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), Groups: []string{srv.SecurityGroupIDs()[1]}, Ipv4PrefixCount: aws.Int32(n)}}}, nil)
}

// A launch whose template asks for prefixes gets them from its subnet:
// aligned /28 blocks inside the subnet, 16 addresses each off
// DescribeSubnets' count; DescribeInstances shows them on the primary
// interface; terminating the instance gives them back.
func TestLaunchDelegatesPrefixesFromTheSubnet(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	prefixTemplate(t, srv, c, "prefixes", 2)
	if lt, _ := srv.LaunchTemplate("prefixes"); lt.Data.IPv4PrefixCount == nil || *lt.Data.IPv4PrefixCount != 2 {
		t.Fatalf("stored count %v", lt.Data.IPv4PrefixCount)
	}
	sn := sub["us-east-1a"]
	before := srv.SubnetAvailable(sn)
	out, err := c.CreateFleet(ctx, fleetFrom("prefixes", "on-demand",
		types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(sn)}))
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("launch: %v %+v", err, out.Errors)
	}
	id := out.Instances[0].InstanceIds[0]
	in, _ := srv.Instance(id)
	if len(in.IPv4Prefixes) != 2 || in.IPv4Prefixes[0] == in.IPv4Prefixes[1] {
		t.Fatalf("prefixes %v", in.IPv4Prefixes)
	}
	if got := before - srv.SubnetAvailable(sn); got != 1+2*16 {
		t.Errorf("subnet gave %d addresses, want 33", got)
	}
	ds, _ := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{sn}})
	_, block, _ := net.ParseCIDR(aws.ToString(ds.Subnets[0].CidrBlock))
	for _, p := range in.IPv4Prefixes {
		ip, n, err := net.ParseCIDR(p)
		if ones, _ := n.Mask.Size(); err != nil || ones != 28 || !ip.Equal(n.IP) || !block.Contains(ip) || ip.Equal(net.ParseIP(in.PrivateIP)) {
			t.Errorf("prefix %s (subnet %s, primary %s)", p, block, in.PrivateIP)
		}
		if len(ec2.PrefixAddresses(p)) != 16 {
			t.Errorf("prefix %s addresses %v", p, ec2.PrefixAddresses(p))
		}
	}
	di, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	nis := di.Reservations[0].Instances[0].NetworkInterfaces
	if len(nis) != 1 || aws.ToInt32(nis[0].Attachment.DeviceIndex) != 0 || len(nis[0].Ipv4Prefixes) != 2 ||
		aws.ToString(nis[0].Ipv4Prefixes[1].Ipv4Prefix) != in.IPv4Prefixes[1] || aws.ToString(nis[0].PrivateIpAddress) != in.PrivateIP {
		t.Errorf("DescribeInstances interfaces %+v", nis)
	}
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "terminated", 2*time.Second, func() bool { in, _ := srv.Instance(id); return in.State == ec2.StateTerminated })
	if got := srv.SubnetAvailable(sn); got != before {
		t.Errorf("after termination the subnet has %d free, had %d", got, before)
	}
}

// EC2 refuses what it would: more prefixes than the interface has address
// slots (one is the primary address's), prefixes on a Xen type, a subnet
// without the addresses, a negative count in the template.
func TestLaunchRefusesPrefixesEC2Refuses(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	prefixTemplate(t, srv, c, "nine", 9)
	prefixTemplate(t, srv, c, "ten", 10)
	prefixTemplate(t, srv, c, "two", 2)
	ov := func(it, zone string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub[zone])}
	}
	if out, err := c.CreateFleet(ctx, fleetFrom("nine", "on-demand", ov("m5.large", "us-east-1a"))); err != nil || len(out.Instances) != 1 {
		t.Errorf("9 prefixes on an m5.large (10 addresses per interface): %v %+v", err, out.Errors)
	}
	if err := srv.SetSubnetAvailable(sub["us-east-1b"], 20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lt string
		ov       types.FleetLaunchTemplateOverridesRequest
		code     string
	}{
		{"beyond the interface's slots", "ten", ov("m5.large", "us-east-1a"), ec2.CodePrivateIPAddressLimitExceeded},
		{"xen type", "two", ov("m4.large", "us-east-1a"), "InvalidParameterValue"},
		{"subnet short", "two", ov("m5.large", "us-east-1b"), "InsufficientFreeAddressesInSubnet"},
	} {
		out, err := c.CreateFleet(ctx, fleetFrom(tc.lt, "on-demand", tc.ov))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(out.Instances) != 0 || len(out.Errors) == 0 || aws.ToString(out.Errors[0].ErrorCode) != tc.code {
			t.Errorf("%s: instances %+v errors %+v, want %s", tc.name, out.Instances, out.Errors, tc.code)
		}
	}
	if got := srv.SubnetAvailable(sub["us-east-1b"]); got != 20 {
		t.Errorf("refused launch took addresses: %d free, want 20", got)
	}
	_, err := c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("negative"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String("ami-1"),
			NetworkInterfaces: []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{DeviceIndex: aws.Int32(0), Ipv4PrefixCount: aws.Int32(-1)}}}})
	if apiCode(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "Ipv4PrefixCount") {
		t.Errorf("negative count: %v", err)
	}
}
