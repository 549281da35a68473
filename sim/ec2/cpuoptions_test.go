package ec2_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// A launch template's CpuOptions.NestedVirtualization is refused unless
// EC2 has the value; at launch an override of a type that does not
// support it is refused (UnsupportedOperation) and the fleet goes on to
// the next override; the instance carries the option in DescribeInstances.
func TestNestedVirtualizationLaunch(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	img := recommended(t, srv, "x86_64", "standard")
	nested := func(v types.NestedVirtualizationSpecification) *types.RequestLaunchTemplateData {
		d := &types.RequestLaunchTemplateData{ImageId: aws.String(img)}
		if v != "" {
			d.CpuOptions = &types.LaunchTemplateCpuOptionsRequest{NestedVirtualization: v}
		}
		return d
	}
	createLT(t, c, "nested-on", nested(types.NestedVirtualizationSpecificationEnabled), nil)
	createLT(t, c, "nested-off", nested(types.NestedVirtualizationSpecificationDisabled), nil)
	createLT(t, c, "plain", nested(""), nil)
	_, err := c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("bad"), LaunchTemplateData: nested("on")})
	if apiCode(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "Value (on) for parameter NestedVirtualization is invalid") {
		t.Errorf("NestedVirtualization on: %v", err)
	}
	ov := func(it string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub["us-east-1a"])}
	}
	cpuOf := func(id string) *types.CpuOptions {
		out, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Reservations[0].Instances[0].CpuOptions
	}

	// m5.large is cheaper, but cannot run nested: the fleet refuses it and
	// launches m8i.large.
	if cpu := cpuOf(fleetFallsBack(t, c, sub, "nested-on", "m5.large", "m8i.large")); cpu == nil || cpu.NestedVirtualization != types.NestedVirtualizationSpecificationEnabled {
		t.Errorf("m8i.large cpuOptions %+v, want nested virtualization enabled", cpu)
	}
	out, err := c.CreateFleet(ctx, fleetFrom("nested-on", "on-demand", ov("m5.large")))
	if err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != ec2.CodeUnsupportedOperation ||
		!strings.Contains(aws.ToString(out.Errors[0].ErrorMessage), "'m5.large' does not support nested virtualization") {
		t.Fatalf("m5.large alone: %+v, %v", out, err)
	}

	// Disabled runs anywhere and says so; a template without CpuOptions
	// gives an instance without them.
	for lt, want := range map[string]types.NestedVirtualizationSpecification{"nested-off": types.NestedVirtualizationSpecificationDisabled, "plain": ""} {
		out, err := c.CreateFleet(ctx, fleetFrom(lt, "on-demand", ov("m5.large")))
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("%s on m5.large: %+v, %v", lt, out, err)
		}
		cpu := cpuOf(out.Instances[0].InstanceIds[0])
		if (want == "") != (cpu == nil) || (cpu != nil && cpu.NestedVirtualization != want) {
			t.Errorf("%s: cpuOptions %+v, want nested virtualization %q", lt, cpu, want)
		}
	}
}

// DescribeInstanceTypes reports nested virtualization in
// ProcessorInfo.SupportedFeatures and filters on it, as Karpenter's design
// queries it.
func TestDescribeInstanceTypesNestedVirtualization(t *testing.T) {
	_, c := start(t, ec2.Options{})
	ctx := context.Background()
	out, err := c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{"m8i.large", "m5.large"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range out.InstanceTypes {
		has := slices.Contains(info.ProcessorInfo.SupportedFeatures, types.SupportedAdditionalProcessorFeatureNestedVirtualization)
		if has != (info.InstanceType == "m8i.large") {
			t.Errorf("%s supported features %v", info.InstanceType, info.ProcessorInfo.SupportedFeatures)
		}
	}
	p := sdkec2.NewDescribeInstanceTypesPaginator(c, &sdkec2.DescribeInstanceTypesInput{Filters: []types.Filter{
		{Name: aws.String("processor-info.supported-features"), Values: []string{"nested-virtualization"}}}})
	var names []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.InstanceTypes {
			names = append(names, string(info.InstanceType))
		}
	}
	if len(names) < 30 || !slices.Contains(names, "c8i-flex.large") || slices.Contains(names, "c8i.metal-48xl") || slices.Contains(names, "m5.large") {
		t.Errorf("types with nested virtualization: %v", names)
	}
}
