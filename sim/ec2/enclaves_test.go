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

// A launch template's EnclaveOptions.Enabled must be a boolean; at launch
// an override of a type without Nitro Enclaves support is refused
// (UnsupportedOperation) and the fleet goes on to the next override; the
// instance shows its EnclaveOptions in DescribeInstances.
func TestNitroEnclavesLaunch(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	img := recommended(t, srv, "x86_64", "standard")
	enclaves := func(v *bool) *types.RequestLaunchTemplateData {
		d := &types.RequestLaunchTemplateData{ImageId: aws.String(img)}
		if v != nil {
			d.EnclaveOptions = &types.LaunchTemplateEnclaveOptionsRequest{Enabled: v}
		}
		return d
	}
	createLT(t, c, "enclaves-on", enclaves(aws.Bool(true)), nil)
	createLT(t, c, "enclaves-off", enclaves(aws.Bool(false)), nil)
	createLT(t, c, "plain", enclaves(nil), nil)
	ov := func(it string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub["us-east-1a"])}
	}
	enabledOf := func(id string) bool {
		out, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		o := out.Reservations[0].Instances[0].EnclaveOptions
		if o == nil {
			t.Fatalf("%s: no EnclaveOptions in DescribeInstances", id)
		}
		return aws.ToBool(o.Enabled)
	}

	// t3.xlarge is cheaper, but cannot be a parent instance: the fleet
	// refuses it and launches m5.xlarge.
	if !enabledOf(fleetFallsBack(t, c, sub, "enclaves-on", "t3.xlarge", "m5.xlarge")) {
		t.Error("m5.xlarge launched without enclaves")
	}
	out, err := c.CreateFleet(ctx, fleetFrom("enclaves-on", "on-demand", ov("m5.large")))
	if err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != ec2.CodeUnsupportedOperation ||
		!strings.Contains(aws.ToString(out.Errors[0].ErrorMessage), "'m5.large' does not support Nitro Enclaves") {
		t.Fatalf("m5.large (2 vCPUs) alone: %+v, %v", out, err)
	}
	// Disabled, or not sent, runs on any type and shows enabled false.
	for _, lt := range []string{"enclaves-off", "plain"} {
		out, err := c.CreateFleet(ctx, fleetFrom(lt, "on-demand", ov("t3.xlarge")))
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("%s on t3.xlarge: %+v, %v", lt, out, err)
		}
		if enabledOf(out.Instances[0].InstanceIds[0]) {
			t.Errorf("%s: instance has enclaves enabled", lt)
		}
	}
	kept := map[string]bool{}
	for _, lt := range srv.LaunchTemplates() {
		kept[lt.Name] = lt.Data.EnclavesEnabled
	}
	if !kept["enclaves-on"] || kept["enclaves-off"] || kept["plain"] {
		t.Errorf("templates kept EnclavesEnabled %v", kept)
	}
}

// DescribeInstanceTypes reports NitroEnclavesSupport from the catalog and
// filters on nitro-enclaves-support.
func TestDescribeInstanceTypesNitroEnclaves(t *testing.T) {
	_, c := start(t, ec2.Options{})
	ctx := context.Background()
	out, err := c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{"m5.xlarge", "t3.xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range out.InstanceTypes {
		want := types.NitroEnclavesSupportUnsupported
		if info.InstanceType == "m5.xlarge" {
			want = types.NitroEnclavesSupportSupported
		}
		if info.NitroEnclavesSupport != want {
			t.Errorf("%s NitroEnclavesSupport %q, want %q", info.InstanceType, info.NitroEnclavesSupport, want)
		}
	}
	p := sdkec2.NewDescribeInstanceTypesPaginator(c, &sdkec2.DescribeInstanceTypesInput{Filters: []types.Filter{
		{Name: aws.String("nitro-enclaves-support"), Values: []string{"supported"}}}})
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
	if len(names) < 300 || !slices.Contains(names, "c6g.large") || slices.Contains(names, "m5.large") || slices.Contains(names, "t3.xlarge") {
		t.Errorf("%d types with Nitro Enclaves: %v", len(names), names)
	}
}
