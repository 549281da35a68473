package ec2_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// CreatePlacementGroup checks the strategy and its parameters and refuses
// a name taken; DescribePlacementGroups answers by name, id and filters,
// and an unknown name is InvalidPlacementGroup.Unknown; a group with
// instances left is not deleted.
func TestPlacementGroupsCreateDescribe(t *testing.T) {
	_, c, _ := strictWorld(t)
	ctx := context.Background()
	create := func(name string, s types.PlacementStrategy, partitions int32) (*types.PlacementGroup, error) {
		in := &sdkec2.CreatePlacementGroupInput{GroupName: aws.String(name), Strategy: s}
		if partitions != 0 {
			in.PartitionCount = aws.Int32(partitions)
		}
		out, err := c.CreatePlacementGroup(ctx, in)
		if err != nil {
			return nil, err
		}
		return out.PlacementGroup, nil
	}
	cl, err := create("hpc", types.PlacementStrategyCluster, 0)
	if err != nil || !strings.HasPrefix(aws.ToString(cl.GroupId), "pg-") || cl.State != types.PlacementGroupStateAvailable {
		t.Fatalf("create cluster: %+v, %v", cl, err)
	}
	part, err := create("kafka", types.PlacementStrategyPartition, 3)
	if err != nil || aws.ToInt32(part.PartitionCount) != 3 {
		t.Fatalf("create partition: %+v, %v", part, err)
	}
	sp, err := create("etcd", types.PlacementStrategySpread, 0)
	if err != nil || sp.SpreadLevel != types.SpreadLevelRack {
		t.Fatalf("create spread: %+v, %v", sp, err)
	}
	for _, bad := range []struct {
		name       string
		s          types.PlacementStrategy
		partitions int32
		code       string
	}{
		{"hpc", types.PlacementStrategyCluster, 0, ec2.CodeInvalidPlacementGroupDuplicate},
		{"x", "clustered", 0, "InvalidParameterValue"},
		{"x", types.PlacementStrategyPartition, 8, "InvalidParameterValue"},
		{"x", types.PlacementStrategyCluster, 2, "InvalidParameterCombination"},
	} {
		if _, err := create(bad.name, bad.s, bad.partitions); apiCode(err) != bad.code {
			t.Errorf("create %s %s/%d: %v, want %s", bad.name, bad.s, bad.partitions, err, bad.code)
		}
	}

	names := func(in *sdkec2.DescribePlacementGroupsInput) []string {
		out, err := c.DescribePlacementGroups(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range out.PlacementGroups {
			got = append(got, aws.ToString(g.GroupName))
		}
		return got
	}
	if got := names(&sdkec2.DescribePlacementGroupsInput{}); strings.Join(got, ",") != "hpc,kafka,etcd" {
		t.Errorf("all groups %v", got)
	}
	if got := names(&sdkec2.DescribePlacementGroupsInput{GroupIds: []string{aws.ToString(part.GroupId)}}); strings.Join(got, ",") != "kafka" {
		t.Errorf("by id %v", got)
	}
	filtered := &sdkec2.DescribePlacementGroupsInput{Filters: []types.Filter{
		{Name: aws.String("strategy"), Values: []string{"spread", "cluster"}}, {Name: aws.String("state"), Values: []string{"available"}}}}
	if got := names(filtered); strings.Join(got, ",") != "hpc,etcd" {
		t.Errorf("by strategy %v", got)
	}
	_, err = c.DescribePlacementGroups(ctx, &sdkec2.DescribePlacementGroupsInput{GroupNames: []string{"nope"}})
	if apiCode(err) != ec2.CodeInvalidPlacementGroupUnknown || !strings.Contains(err.Error(), "The Placement Group 'nope' is unknown.") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := c.DeletePlacementGroup(ctx, &sdkec2.DeletePlacementGroupInput{GroupName: aws.String("etcd")}); err != nil {
		t.Errorf("delete empty group: %v", err)
	}
}

// pgWorld is a strict world with a launch template per group (by name).
func pgWorld(t *testing.T, groups ...ec2.PlacementGroup) (*ec2.Server, *sdkec2.Client, map[string]string) {
	t.Helper()
	srv, c, sub := strictWorld(t)
	img := recommended(t, srv, "x86_64", "standard")
	for _, g := range groups {
		if _, err := srv.AddPlacementGroup(g); err != nil {
			t.Fatal(err)
		}
		createLT(t, c, g.Name, &types.RequestLaunchTemplateData{ImageId: aws.String(img),
			Placement: &types.LaunchTemplatePlacementRequest{GroupName: aws.String(g.Name)}}, nil)
	}
	return srv, c, sub
}

func launchIn(t *testing.T, c *sdkec2.Client, lt string, ovs ...types.FleetLaunchTemplateOverridesRequest) *sdkec2.CreateFleetOutput {
	t.Helper()
	out, err := c.CreateFleet(context.Background(), fleetFrom(lt, "on-demand", ovs...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fleetErr(out *sdkec2.CreateFleetOutput) (code, msg string) {
	if len(out.Errors) == 0 {
		return "", ""
	}
	e := out.Errors[0]
	return aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
}

// A cluster group's instances stay in one zone (InvalidPlacementGroup.InUse
// in another), and burstable types are refused
// (InvalidParameterCombination); DescribeInstances shows the group.
func TestClusterPlacementGroupLaunch(t *testing.T) {
	_, c, sub := pgWorld(t, ec2.PlacementGroup{Name: "hpc", Strategy: ec2.PlacementStrategyCluster})
	ov := func(it, zone string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub[zone])}
	}
	out := launchIn(t, c, "hpc", ov("c5.large", "us-east-1b"))
	if len(out.Instances) != 1 {
		t.Fatalf("first launch: %+v", out.Errors)
	}
	d, err := c.DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: aws.String("placement-group-name"), Values: []string{"hpc"}}}})
	if err != nil || len(d.Reservations) != 1 || aws.ToString(d.Reservations[0].Instances[0].Placement.GroupName) != "hpc" ||
		!strings.HasPrefix(aws.ToString(d.Reservations[0].Instances[0].Placement.GroupId), "pg-") {
		t.Fatalf("DescribeInstances by group: %+v, %v", d, err)
	}
	out = launchIn(t, c, "hpc", ov("c5.large", "us-east-1a"))
	if code, msg := fleetErr(out); len(out.Instances) != 0 || code != ec2.CodeInvalidPlacementGroupInUse ||
		msg != "The placement group 'hpc' is in use in another availability zone: us-east-1b" {
		t.Errorf("other zone: %+v %s %s", out.Instances, code, msg)
	}
	out = launchIn(t, c, "hpc", ov("t3.large", "us-east-1b"))
	if code, msg := fleetErr(out); len(out.Instances) != 0 || code != "InvalidParameterCombination" ||
		!strings.Contains(msg, "Cluster placement groups are not supported by the 't3.large' instance type") {
		t.Errorf("t3.large: %+v %s %s", out.Instances, code, msg)
	}
	if out = launchIn(t, c, "hpc", ov("c5.xlarge", "us-east-1b")); len(out.Instances) != 1 {
		t.Errorf("same zone: %+v", out.Errors)
	}
}

// A spread group takes seven instances per zone: the eighth is
// InsufficientInstanceCapacity with EC2's message; another zone has room.
func TestSpreadPlacementGroupLimit(t *testing.T) {
	_, c, sub := pgWorld(t, ec2.PlacementGroup{Name: "etcd", Strategy: ec2.PlacementStrategySpread})
	ov := func(zone string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(sub[zone])}
	}
	in := fleetFrom("etcd", "on-demand", ov("us-east-1a"))
	in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(8)
	in.TargetCapacitySpecification.OnDemandTargetCapacity = aws.Int32(8)
	out, err := c.CreateFleet(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	code, msg := fleetErr(out)
	if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 7 || code != ec2.CodeInsufficientInstanceCapacity ||
		!strings.Contains(msg, "limit of instances in this spread placement group") {
		t.Fatalf("8 into one zone: %+v, %s %s", out.Instances, code, msg)
	}
	if out := launchIn(t, c, "etcd", ov("us-east-1b")); len(out.Instances) != 1 {
		t.Errorf("another zone: %+v", out.Errors)
	}
}

// A partition group spreads instances over its partitions (least used
// first) unless the template names one; a number past the group's count is
// InvalidParameterValue; an unknown group is InvalidPlacementGroup.Unknown.
func TestPartitionPlacementGroupLaunch(t *testing.T) {
	srv, c, sub := pgWorld(t, ec2.PlacementGroup{Name: "kafka", Strategy: ec2.PlacementStrategyPartition, PartitionCount: 2})
	img := recommended(t, srv, "x86_64", "standard")
	ov := types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(sub["us-east-1a"])}
	var parts []int32
	for range 3 {
		out := launchIn(t, c, "kafka", ov)
		if len(out.Instances) != 1 {
			t.Fatalf("launch: %+v", out.Errors)
		}
		d, err := c.DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, aws.ToInt32(d.Reservations[0].Instances[0].Placement.PartitionNumber))
	}
	if parts[0] != 1 || parts[1] != 2 || parts[2] != 1 {
		t.Errorf("partitions %v, want [1 2 1]", parts)
	}
	lt := func(name string, p *types.LaunchTemplatePlacementRequest) {
		createLT(t, c, name, &types.RequestLaunchTemplateData{ImageId: aws.String(img), Placement: p}, nil)
	}
	lt("part3", &types.LaunchTemplatePlacementRequest{GroupName: aws.String("kafka"), PartitionNumber: aws.Int32(3)})
	lt("ghost", &types.LaunchTemplatePlacementRequest{GroupName: aws.String("ghost")})
	if code, msg := fleetErr(launchIn(t, c, "part3", ov)); code != "InvalidParameterValue" || !strings.Contains(msg, "partitionNumber") {
		t.Errorf("partition 3 of 2: %s %s", code, msg)
	}
	if code, msg := fleetErr(launchIn(t, c, "ghost", ov)); code != ec2.CodeInvalidPlacementGroupUnknown || msg != "The Placement Group 'ghost' is unknown." {
		t.Errorf("unknown group: %s %s", code, msg)
	}
	_, err := c.DeletePlacementGroup(context.Background(), &sdkec2.DeletePlacementGroupInput{GroupName: aws.String("kafka")})
	if apiCode(err) != ec2.CodeInvalidPlacementGroupInUse {
		t.Errorf("delete group with instances: %v", err)
	}
}
