package ec2_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

type niReq = types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest

func niOn(card, dev int32, typ string) niReq {
	r := niReq{NetworkCardIndex: aws.Int32(card), DeviceIndex: aws.Int32(dev)}
	if typ != "" {
		r.InterfaceType = aws.String(typ)
	}
	return r
}

// A launch template's network interfaces are enforced per override as
// EC2 does, rule by rule; the fleet launches the override that takes them
// and DescribeInstances shows each interface with its type, card and
// device (efa-only ones without an address).
func TestNetworkInterfacesLaunch(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	img := recommended(t, srv, "x86_64", "standard")
	yes := true
	primary := niOn(0, 0, "interface")
	withPublic := primary
	withPublic.AssociatePublicIpAddress = &yes
	efaOnlyPrefixes := niOn(0, 1, "efa-only")
	efaOnlyPrefixes.Ipv4PrefixCount = aws.Int32(1)
	cases := []struct {
		name  string
		nis   []niReq
		types []string // overrides, cheapest first
		code  string   // the first override's refusal; "" launches it
		msg   string
	}{
		{"efa-only on card 0", []niReq{primary, niOn(0, 1, "efa-only")}, []string{"c5n.9xlarge"}, "", ""},
		{"efa primary (Karpenter's EFA launch)", []niReq{niOn(0, 0, "efa")}, []string{"c5n.9xlarge"}, "", ""},
		{"efa on a type without EFA", []niReq{primary, niOn(0, 1, "efa-only")}, []string{"m5.large", "c5n.9xlarge"}, ec2.CodeUnsupported, "currently not supported"},
		{"card the type lacks", []niReq{primary, niOn(1, 0, "efa-only")}, []string{"c5n.9xlarge", "c6in.32xlarge"}, ec2.CodeInvalidParameterValue, "Network card index 1"},
		{"device past the card's limit", []niReq{primary, niOn(0, 8, "efa-only")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterValue, "Device index 8 exceeds the 8"},
		{"more EFA than the type has", []niReq{primary, niOn(0, 1, "efa-only"), niOn(0, 2, "efa")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterValue, "at most 1 EFA interfaces; 2"},
		{"duplicate device", []niReq{primary, niOn(0, 1, "interface"), niOn(0, 1, "efa-only")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterValue, "unique device index"},
		{"no primary", []niReq{niOn(0, 1, "interface")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterValue, "device index 0 on network card 0"},
		{"efa-only primary", []niReq{niOn(0, 0, "efa-only")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterCombination, "cannot be the primary"},
		{"public IP with several", []niReq{withPublic, niOn(0, 1, "efa-only")}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterCombination, "associatePublicIPAddress parameter cannot be specified"},
		{"prefixes on efa-only", []niReq{primary, efaOnlyPrefixes}, []string{"c5n.9xlarge"}, ec2.CodeInvalidParameterValue, "EFA-only network interfaces do not support IP addresses"},
	}
	for i, tc := range cases {
		name := "ni-" + string(rune('a'+i))
		createLT(t, c, name, &types.RequestLaunchTemplateData{ImageId: aws.String(img), NetworkInterfaces: tc.nis}, nil)
		var ovs []types.FleetLaunchTemplateOverridesRequest
		for _, it := range tc.types {
			ovs = append(ovs, types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub["us-east-1b"])})
		}
		out, err := c.CreateFleet(ctx, fleetFrom(name, "on-demand", ovs...))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.code == "" {
			if len(out.Errors) != 0 || len(out.Instances) != 1 {
				t.Errorf("%s: %+v errors %+v, want %s launched", tc.name, out.Instances, out.Errors, tc.types[0])
			}
			continue
		}
		if len(out.Errors) == 0 || aws.ToString(out.Errors[0].ErrorCode) != tc.code || !strings.Contains(aws.ToString(out.Errors[0].ErrorMessage), tc.msg) ||
			out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != types.InstanceType(tc.types[0]) {
			t.Errorf("%s: errors %+v, want %s %q for %s", tc.name, out.Errors, tc.code, tc.msg, tc.types[0])
			continue
		}
		if len(tc.types) > 1 && (len(out.Instances) != 1 || out.Instances[0].InstanceType != types.InstanceType(tc.types[1])) {
			for _, e := range out.Errors {
				t.Logf("%s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
			}
			t.Errorf("%s: %+v, want the fleet to go on to %s", tc.name, out.Instances, tc.types[1])
		}
	}

	// The instance shows its interfaces: the primary ENA one with an
	// address, the efa-only one on device 1 without.
	out, err := c.CreateFleet(ctx, fleetFrom("ni-a", "on-demand", types.FleetLaunchTemplateOverridesRequest{InstanceType: "c5n.9xlarge", SubnetId: aws.String(sub["us-east-1b"])}))
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("c5n.9xlarge: %+v %v", out, err)
	}
	di, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range di.Reservations[0].Instances[0].NetworkInterfaces {
		got = append(got, strings.Join([]string{aws.ToString(n.InterfaceType), itoa(aws.ToInt32(n.Attachment.NetworkCardIndex)),
			itoa(aws.ToInt32(n.Attachment.DeviceIndex)), boolWord(aws.ToString(n.PrivateIpAddress) != "")}, "/"))
	}
	if strings.Join(got, " ") != "interface/0/0/addressed efa-only/0/1/none" {
		t.Errorf("interfaces %v", got)
	}
	in, _ := srv.Instance(out.Instances[0].InstanceIds[0])
	if in.EFAInterfaces() != 1 || in.NoAddressInterfaces() != 1 {
		t.Errorf("EFA interfaces %d, no-address %d, want 1 and 1", in.EFAInterfaces(), in.NoAddressInterfaces())
	}

	// An interface type EC2 does not have is refused with the template.
	_, err = c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("ni-bad"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String(img), NetworkInterfaces: []niReq{niOn(0, 0, "fast")}}})
	if apiCode(err) != ec2.CodeInvalidParameterValue || !strings.Contains(err.Error(), "Value (fast) for parameter interfaceType is invalid") {
		t.Errorf("interfaceType fast: %v", err)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func boolWord(b bool) string {
	if b {
		return "addressed"
	}
	return "none"
}
