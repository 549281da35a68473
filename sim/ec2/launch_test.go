package ec2_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

func createLT(t *testing.T, c *sdkec2.Client, name string, d *types.RequestLaunchTemplateData, tags map[string]string) *types.LaunchTemplate {
	t.Helper()
	in := &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: d}
	if len(tags) > 0 {
		ts := types.TagSpecification{ResourceType: types.ResourceTypeLaunchTemplate}
		for k, v := range tags {
			ts.Tags = append(ts.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		in.TagSpecifications = []types.TagSpecification{ts}
	}
	out, err := c.CreateLaunchTemplate(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateLaunchTemplate %s: %v", name, err)
	}
	return out.LaunchTemplate
}

func TestLaunchTemplatesCreateDescribeDelete(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	img := recommended(t, srv, "x86_64", "standard")
	ud := base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\necho hi\n"))
	lt := createLT(t, c, "karpenter.k8s.aws/123", &types.RequestLaunchTemplateData{
		ImageId: aws.String(img), UserData: aws.String(ud),
		IamInstanceProfile: &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("prof")},
		NetworkInterfaces: []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), Groups: []string{srv.SecurityGroupIDs()[1]}}},
		BlockDeviceMappings: []types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
			Ebs: &types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(80), VolumeType: types.VolumeTypeGp3, Encrypted: aws.Bool(true)}}},
		MetadataOptions: &types.LaunchTemplateInstanceMetadataOptionsRequest{HttpTokens: types.LaunchTemplateHttpTokensStateRequired,
			HttpPutResponseHopLimit: aws.Int32(1), HttpEndpoint: types.LaunchTemplateInstanceMetadataEndpointStateEnabled},
		TagSpecifications: []types.LaunchTemplateTagSpecificationRequest{{ResourceType: types.ResourceTypeInstance,
			Tags: []types.Tag{{Key: aws.String("from-lt"), Value: aws.String("yes")}}}},
	}, map[string]string{"joinery.sh/cluster": "c1"})
	if !strings.HasPrefix(aws.ToString(lt.LaunchTemplateId), "lt-0") || aws.ToInt64(lt.LatestVersionNumber) != 1 || lt.CreateTime == nil {
		t.Fatalf("created %+v", lt)
	}
	got, ok := srv.LaunchTemplate("karpenter.k8s.aws/123")
	if !ok || got.Data.ImageID != img || got.Data.UserData != ud || got.Data.IamInstanceProfileName != "prof" ||
		!slices.Equal(got.Data.SecurityGroupIDs, []string{srv.SecurityGroupIDs()[1]}) ||
		len(got.Data.BlockDevices) != 1 || got.Data.BlockDevices[0].VolumeSize != 80 || !*got.Data.BlockDevices[0].Encrypted ||
		got.Data.MetadataOptions.HTTPTokens != "required" || got.Data.TagSpecifications["instance"]["from-lt"] != "yes" {
		t.Fatalf("stored %+v", got)
	}

	_, err := c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("karpenter.k8s.aws/123"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String(img)}})
	if apiCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Errorf("duplicate name: %v", err)
	}
	_, err = c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("x"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String(img)}})
	if apiCode(err) != "InvalidLaunchTemplateName.MalformedException" {
		t.Errorf("short name: %v", err)
	}
	_, err = c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("bad-ud"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{UserData: aws.String("not base64!")}})
	if apiCode(err) != "InvalidUserData.Malformed" {
		t.Errorf("bad user data: %v", err)
	}

	byName, err := c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"karpenter.k8s.aws/123"}})
	if err != nil || len(byName.LaunchTemplates) != 1 || aws.ToString(byName.LaunchTemplates[0].LaunchTemplateId) != got.ID {
		t.Fatalf("by name: %+v, %v", byName, err)
	}
	byTag, err := c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{Filters: []types.Filter{
		{Name: aws.String("tag:joinery.sh/cluster"), Values: []string{"c1"}}}})
	if err != nil || len(byTag.LaunchTemplates) != 1 || aws.ToString(byTag.LaunchTemplates[0].Tags[0].Value) != "c1" {
		t.Fatalf("by tag: %+v, %v", byTag, err)
	}
	none, err := c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{Filters: []types.Filter{
		{Name: aws.String("tag:joinery.sh/cluster"), Values: []string{"other"}}}})
	if err != nil || len(none.LaunchTemplates) != 0 {
		t.Errorf("filter matching nothing: %+v, %v", none, err)
	}
	_, err = c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"missing"}})
	if apiCode(err) != "InvalidLaunchTemplateName.NotFoundException" {
		t.Errorf("describe missing name: %v", err)
	}
	_, err = c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{"lt-0123456789abcdef0"}})
	if apiCode(err) != "InvalidLaunchTemplateId.NotFound" {
		t.Errorf("describe missing id: %v", err)
	}

	if _, err := c.DeleteLaunchTemplate(ctx, &sdkec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(got.ID)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteLaunchTemplate(ctx, &sdkec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(got.ID)})
	if apiCode(err) != "InvalidLaunchTemplateId.NotFound" || !strings.Contains(err.Error(), got.ID) {
		t.Errorf("delete twice: %v", err)
	}
	_, err = c.DeleteLaunchTemplate(ctx, &sdkec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("karpenter.k8s.aws/123")})
	if apiCode(err) != "InvalidLaunchTemplateName.NotFoundException" {
		t.Errorf("delete by missing name: %v", err)
	}
}

func TestDescribeImages(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	out, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-1.37-*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 2 || aws.ToString(out.Images[0].Name) != "amazon-eks-node-al2023-arm64-standard-1.37-v20261101" ||
		out.Images[0].Architecture != types.ArchitectureValuesArm64 || aws.ToString(out.Images[0].OwnerId) != ec2.EKSImageOwner ||
		aws.ToString(out.Images[0].CreationDate) != "2026-11-01T06:12:34.000Z" || out.Images[0].State != types.ImageStateAvailable {
		t.Fatalf("al2023 arm64 images: %+v", out.Images)
	}
	arm := aws.ToString(out.Images[0].ImageId)
	if a, v, ok := srv.ImageArchVariant(arm); !ok || a != "arm64" || v != "standard" {
		t.Errorf("ImageArchVariant(%s) = %s %s %v", arm, a, v, ok)
	}
	byID, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{ImageIds: []string{arm},
		Filters: []types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}, IncludeDeprecated: aws.Bool(true)})
	if err != nil || len(byID.Images) != 1 {
		t.Fatalf("by id: %+v, %v", byID, err)
	}
	_, err = c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{ImageIds: []string{"ami-0123456789abcdef0"}})
	if apiCode(err) != "InvalidAMIID.NotFound" {
		t.Errorf("unknown id: %v", err)
	}
	_, err = c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{ImageIds: []string{"image-1"}})
	if apiCode(err) != "InvalidAMIID.Malformed" {
		t.Errorf("malformed id: %v", err)
	}
	br, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{Filters: []types.Filter{
		{Name: aws.String("name"), Values: []string{"bottlerocket-aws-k8s-1.37-nvidia-*"}},
		{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil || len(br.Images) != 2 || !strings.Contains(aws.ToString(br.Images[0].Name), "-v1.51.0-") {
		t.Fatalf("bottlerocket nvidia: %+v, %v", br.Images, err)
	}

	custom, err := srv.AddImage(ec2.Image{Name: "team-golden", Architecture: "x86_64", Tags: map[string]string{"team": "platform"}})
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{Owners: []string{"self"},
		Filters: []types.Filter{{Name: aws.String("tag:team"), Values: []string{"platform"}}}})
	if err != nil || len(tagged.Images) != 1 || aws.ToString(tagged.Images[0].ImageId) != custom.ID {
		t.Fatalf("by tag: %+v, %v", tagged, err)
	}

	// Deprecated images only with IncludeDeprecated.
	old := srv.Images()[len(srv.Images())-1]
	srv.DeprecateImage(old.ID, old.CreationDate)
	hidden, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{ImageIds: []string{old.ID}})
	if err != nil || len(hidden.Images) != 0 {
		t.Errorf("deprecated without IncludeDeprecated: %+v, %v", hidden.Images, err)
	}
	shown, err := c.DescribeImages(ctx, &sdkec2.DescribeImagesInput{ImageIds: []string{old.ID}, IncludeDeprecated: aws.Bool(true)})
	if err != nil || len(shown.Images) != 1 || shown.Images[0].DeprecationTime == nil {
		t.Errorf("deprecated with IncludeDeprecated: %+v, %v", shown.Images, err)
	}
}

func TestPublishImageReleaseRepointsRecommended(t *testing.T) {
	srv, _ := start(t, ec2.Options{})
	const rec = "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/recommended/image_id"
	before, v1, _, _ := srv.SSMParameter(rec)
	imgs, err := srv.PublishImageRelease("v20261201")
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 15 {
		t.Errorf("%d new images, want 15 (5 AL2023, 3 AL2, 4 Bottlerocket, 3 Windows)", len(imgs))
	}
	const win = "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.37/image_id"
	if id, _, _, ok := srv.SSMParameter(win); !ok {
		t.Errorf("%s not published", win)
	} else if im, _ := srv.Image(id); im.Name != "Windows_Server-2022-English-Core-EKS_Optimized-1.37-2026.12.01" || im.Architecture != "x86_64" {
		t.Errorf("%s -> %+v, want the new release's x86_64 Windows Server 2022 image", win, im)
	}
	after, v2, mod, _ := srv.SSMParameter(rec)
	im, _ := srv.Image(after)
	if after == before || v2 != v1+1 || im.Name != "amazon-eks-node-al2023-x86_64-nvidia-1.37-v20261201" || im.Variant != "nvidia" ||
		mod.Format("2006-01-02") != "2026-12-01" {
		t.Errorf("recommended %s -> %s (v%d -> v%d), image %+v", before, after, v1, v2, im)
	}
	if pinned, _, _, ok := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.37-v20261101/image_id"); !ok || pinned != before {
		t.Errorf("pinned v20261101 = %s %v, want %s", pinned, ok, before)
	}
	if id, _, _, ok := srv.SSMParameter("/aws/service/bottlerocket/aws-k8s-1.37/arm64/latest/image_id"); !ok {
		t.Error("no bottlerocket latest")
	} else if im, _ := srv.Image(id); im.Release != "1.52.0" || im.Architecture != "arm64" {
		t.Errorf("bottlerocket latest %+v", im)
	}
	if _, _, _, ok := srv.SSMParameter("/aws/service/bottlerocket/aws-k8s-1.37/arm64/1.50.0/image_id"); !ok {
		t.Error("bottlerocket pinned 1.50.0 gone")
	}
	if _, err := srv.PublishImageRelease("v20261101"); err == nil {
		t.Error("older release accepted")
	}
	if _, err := srv.PublishImageRelease("20270101"); err == nil {
		t.Error("version without v accepted")
	}
}

// strictWorld is an endpoint whose IAM knows one instance profile, with a
// launch template from it.
func strictWorld(t *testing.T) (*ec2.Server, *sdkec2.Client, map[string]string) {
	t.Helper()
	srv, c := start(t, ec2.Options{BootDelay: -1, InstanceProfile: func(name string) (string, bool) {
		if name == "joinery-node" {
			return "arn:aws:iam::123456789012:instance-profile/karpenter/joinery-node", true
		}
		return "", false
	}})
	return srv, c, subnetsByZone(t, c)
}

func fleetFrom(lt string, ct string, ov ...types.FleetLaunchTemplateOverridesRequest) *sdkec2.CreateFleetInput {
	in := fleet(ct, 1, nil, nil)
	in.LaunchTemplateConfigs = []types.FleetLaunchTemplateConfigRequest{{
		LaunchTemplateSpecification: &types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(lt), Version: aws.String("$Latest")},
		Overrides:                   ov,
	}}
	return in
}

func TestCreateFleetIsStrictAboutLaunchInputs(t *testing.T) {
	srv, c, sub := strictWorld(t)
	ctx := context.Background()
	x86, arm := recommended(t, srv, "x86_64", "standard"), recommended(t, srv, "arm64", "standard")
	ud := base64.StdEncoding.EncodeToString([]byte("MIME-Version: 1.0\n"))
	node := srv.SecurityGroupIDs()[1]
	createLT(t, c, "good", &types.RequestLaunchTemplateData{ImageId: aws.String(x86), UserData: aws.String(ud),
		IamInstanceProfile: &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("joinery-node")},
		SecurityGroupIds:   []string{node},
		MetadataOptions:    &types.LaunchTemplateInstanceMetadataOptionsRequest{HttpTokens: types.LaunchTemplateHttpTokensStateRequired, HttpPutResponseHopLimit: aws.Int32(1)},
		BlockDeviceMappings: []types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
			Ebs: &types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(40), VolumeType: types.VolumeTypeGp3}}},
	}, nil)
	createLT(t, c, "no-profile", &types.RequestLaunchTemplateData{ImageId: aws.String(x86),
		IamInstanceProfile: &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("missing-profile")}}, nil)
	createLT(t, c, "bad-group", &types.RequestLaunchTemplateData{ImageId: aws.String(x86), SecurityGroupIds: []string{"sg-0000000000000dead"}}, nil)
	createLT(t, c, "bad-image", &types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000dead")}, nil)
	ov := func(it, subnet, image string) types.FleetLaunchTemplateOverridesRequest {
		o := types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(subnet)}
		if image != "" {
			o.ImageId = aws.String(image)
		}
		return o
	}

	t.Run("unknown template", func(t *testing.T) {
		_, err := c.CreateFleet(ctx, fleetFrom("nope", "on-demand", ov("m5.large", sub["us-east-1a"], "")))
		if apiCode(err) != "InvalidLaunchTemplateName.NotFoundException" || !strings.Contains(err.Error(), "template name nope") {
			t.Errorf("by name: %v", err)
		}
		in := fleetFrom("x", "on-demand", ov("m5.large", sub["us-east-1a"], ""))
		in.LaunchTemplateConfigs[0].LaunchTemplateSpecification = &types.FleetLaunchTemplateSpecificationRequest{
			LaunchTemplateId: aws.String("lt-0123456789abcdef0"), Version: aws.String("1")}
		_, err = c.CreateFleet(ctx, in)
		if apiCode(err) != "InvalidLaunchTemplateId.NotFound" {
			t.Errorf("by id: %v", err)
		}
		in = fleetFrom("good", "on-demand", ov("m5.large", sub["us-east-1a"], ""))
		in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.Version = aws.String("7")
		_, err = c.CreateFleet(ctx, in)
		if apiCode(err) != "InvalidLaunchTemplateId.VersionNotFound" {
			t.Errorf("unknown version: %v", err)
		}
	})

	// Each refusal is one entry of Errors, naming the override, and nothing
	// launches; EC2 sums an InvalidParameterValue one up as
	// UnfulfillableCapacity "due to your request configuration" on that
	// override.
	for _, tc := range []struct {
		name, lt string
		ov       types.FleetLaunchTemplateOverridesRequest
		code     string
		msg      string
	}{
		{"arch mismatch", "good", ov("m6g.large", sub["us-east-1a"], ""), "InvalidParameterValue", "architecture 'arm64' of the specified instance type does not match the architecture 'x86_64'"},
		{"unknown subnet", "good", ov("m5.large", "subnet-0000000000000dead", ""), "InvalidSubnetID.NotFound", "subnet-0000000000000dead"},
		{"unknown security group", "bad-group", ov("m5.large", sub["us-east-1a"], ""), "InvalidGroup.NotFound", "sg-0000000000000dead"},
		{"unknown image", "bad-image", ov("m5.large", sub["us-east-1a"], ""), "InvalidAMIID.NotFound", "ami-0000000000000dead"},
		{"unknown override image", "good", ov("m5.large", sub["us-east-1a"], "ami-0000000000000beef"), "InvalidAMIID.NotFound", "ami-0000000000000beef"},
		{"missing instance profile", "no-profile", ov("m5.large", sub["us-east-1a"], ""), "InvalidParameterValue", "Invalid IAM Instance Profile name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.CreateFleet(ctx, fleetFrom(tc.lt, "on-demand", tc.ov))
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.code == "InvalidParameterValue" {
				want = 2
			}
			if len(out.Instances) != 0 || len(out.Errors) != want {
				t.Fatalf("instances %+v errors %+v", out.Instances, out.Errors)
			}
			e := out.Errors[0]
			if sum := out.Errors[want-1]; want == 2 && (aws.ToString(sum.ErrorCode) != "UnfulfillableCapacity" ||
				!strings.Contains(aws.ToString(sum.ErrorMessage), "request configuration") ||
				string(sum.LaunchTemplateAndOverrides.Overrides.InstanceType) != string(tc.ov.InstanceType)) {
				t.Errorf("summary %s: %s", aws.ToString(sum.ErrorCode), aws.ToString(sum.ErrorMessage))
			}
			if aws.ToString(e.ErrorCode) != tc.code || !strings.Contains(aws.ToString(e.ErrorMessage), tc.msg) ||
				string(e.LaunchTemplateAndOverrides.Overrides.InstanceType) != string(tc.ov.InstanceType) ||
				aws.ToString(e.LaunchTemplateAndOverrides.LaunchTemplateSpecification.LaunchTemplateName) != tc.lt {
				t.Errorf("error %s: %s (%+v)", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage), e.LaunchTemplateAndOverrides)
			}
		})
	}

	t.Run("full subnet", func(t *testing.T) {
		if err := srv.SetSubnetAvailable(sub["us-east-1b"], 1); err != nil {
			t.Fatal(err)
		}
		desc, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{sub["us-east-1b"]}})
		if err != nil || aws.ToInt32(desc.Subnets[0].AvailableIpAddressCount) != 1 {
			t.Fatalf("DescribeSubnets: %+v, %v", desc, err)
		}
		if out, err := c.CreateFleet(ctx, fleetFrom("good", "on-demand", ov("m5.large", sub["us-east-1b"], ""))); err != nil || len(out.Instances) != 1 {
			t.Fatalf("last address: %+v, %v", out, err)
		}
		out, err := c.CreateFleet(ctx, fleetFrom("good", "on-demand", ov("m5.large", sub["us-east-1b"], ""), ov("m5.xlarge", sub["us-east-1c"], "")))
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientFreeAddressesInSubnet" ||
			len(out.Instances) != 1 || aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1c"] {
			t.Errorf("full subnet: errors %+v instances %+v", out.Errors, out.Instances)
		}
	})

	t.Run("the CNI's addresses leave and come back to the subnet", func(t *testing.T) {
		free := func() int32 {
			desc, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{sub["us-east-1c"]}})
			if err != nil {
				t.Fatal(err)
			}
			return aws.ToInt32(desc.Subnets[0].AvailableIpAddressCount)
		}
		if err := srv.SetSubnetAvailable(sub["us-east-1c"], 12); err != nil {
			t.Fatal(err)
		}
		out, err := c.CreateFleet(ctx, fleetFrom("good", "on-demand", ov("m5.large", sub["us-east-1c"], "")))
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("launch: %+v, %v", out, err)
		}
		id := out.Instances[0].InstanceIds[0]
		ips, err := srv.AssignAddresses(id, 9)
		if err != nil || len(ips) != 9 || free() != 2 {
			t.Fatalf("AssignAddresses(9): %v, %v; %d free, want 2", ips, err, free())
		}
		if _, err := srv.AssignAddresses(id, 10); err == nil || !strings.Contains(err.Error(), "InsufficientFreeAddressesInSubnet") || free() != 2 {
			t.Fatalf("AssignAddresses(10) with 2 free: %v; %d free", err, free())
		}
		srv.UnassignAddresses(id, ips[:4])
		if free() != 6 {
			t.Fatalf("%d free after giving 4 back, want 6", free())
		}
		if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Minute); free() != 12 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		}
		if free() != 12 {
			t.Errorf("%d free after the instance terminated, want its 6 addresses back (12)", free())
		}
	})

	t.Run("launch records the template and the override image", func(t *testing.T) {
		out, err := c.CreateFleet(ctx, fleetFrom("good", "spot", ov("m6g.large", sub["us-east-1a"], arm)))
		if err != nil || len(out.Instances) != 1 || len(out.Errors) != 0 {
			t.Fatalf("%+v, %v", out, err)
		}
		if aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.ImageId) != arm {
			t.Errorf("override echoed %+v", out.Instances[0].LaunchTemplateAndOverrides.Overrides)
		}
		id := out.Instances[0].InstanceIds[0]
		in, _ := srv.Instance(id)
		if in.ImageID != arm || in.UserData != ud || in.IAMInstanceProfile != "joinery-node" ||
			in.IAMInstanceProfileArn != "arn:aws:iam::123456789012:instance-profile/karpenter/joinery-node" ||
			!slices.Equal(in.SecurityGroupIDs, []string{node}) || in.MetadataOptions.HTTPTokens != "required" ||
			len(in.BlockDevices) != 1 || in.BlockDevices[0].VolumeSize != 40 || in.LaunchTemplateName != "good" {
			t.Errorf("instance %+v", in)
		}
		d, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		x := d.Reservations[0].Instances[0]
		if aws.ToString(x.ImageId) != arm || aws.ToString(x.IamInstanceProfile.Arn) != in.IAMInstanceProfileArn ||
			len(x.SecurityGroups) != 1 || aws.ToString(x.SecurityGroups[0].GroupId) != node ||
			x.MetadataOptions.HttpTokens != types.HttpTokensStateRequired || len(x.BlockDeviceMappings) != 1 {
			t.Errorf("DescribeInstances %+v", x)
		}
		attr, err := c.DescribeInstanceAttribute(ctx, &sdkec2.DescribeInstanceAttributeInput{InstanceId: aws.String(id), Attribute: types.InstanceAttributeNameUserData})
		if err != nil || aws.ToString(attr.UserData.Value) != ud {
			t.Errorf("userData attribute %+v, %v", attr, err)
		}
	})

	t.Run("a good override launches next to a refused one", func(t *testing.T) {
		out, err := c.CreateFleet(ctx, fleetFrom("good", "on-demand", ov("m6g.large", sub["us-east-1a"], ""), ov("m5.2xlarge", sub["us-east-1a"], "")))
		if err != nil || len(out.Instances) != 1 || len(out.Errors) != 1 || string(out.Instances[0].InstanceType) != "m5.2xlarge" {
			t.Errorf("%+v %+v, %v", out.Instances, out.Errors, err)
		}
	})
}

// A profile EC2 knows but whose role has not reached it is refused per
// override, with EC2's message, beside the request-configuration summary.
func TestCreateFleetRefusesAProfileWithoutRole(t *testing.T) {
	srv, c := start(t, ec2.Options{BootDelay: -1,
		InstanceProfile:        func(name string) (string, bool) { return "arn:aws:iam::123456789012:instance-profile/" + name, true },
		InstanceProfileHasRole: func(string) bool { return false }})
	sub := subnetsByZone(t, c)
	createLT(t, c, "roleless", &types.RequestLaunchTemplateData{ImageId: aws.String(recommended(t, srv, "x86_64", "standard")),
		IamInstanceProfile: &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("fresh")}}, nil)
	out, err := c.CreateFleet(context.Background(), fleetFrom("roleless", "on-demand",
		types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(sub["us-east-1a"])}))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(out.Errors) != 2 || aws.ToString(out.Errors[0].ErrorCode) != "InvalidParameterValue" ||
		aws.ToString(out.Errors[0].ErrorMessage) != `IAM Instance Profile "arn:aws:iam::123456789012:instance-profile/fresh" has no associated IAM Roles` ||
		aws.ToString(out.Errors[1].ErrorCode) != "UnfulfillableCapacity" {
		t.Fatalf("instances %+v errors %+v", out.Instances, out.Errors)
	}
}

// An idle timeout or initialization rate sent as 0 is out of EC2's range,
// as any other value outside it: only a value left out takes EC2's default.
func TestLaunchTemplateRefusesZeroTimeoutsAndRates(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	img := recommended(t, srv, "x86_64", "standard")
	for name, data := range map[string]*types.RequestLaunchTemplateData{
		"UdpTimeout": {ImageId: aws.String(img), NetworkInterfaces: []types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), ConnectionTrackingSpecification: &types.ConnectionTrackingSpecificationRequest{UdpTimeout: aws.Int32(0)}}}},
		"VolumeInitializationRate": {ImageId: aws.String(img), BlockDeviceMappings: []types.LaunchTemplateBlockDeviceMappingRequest{{
			DeviceName: aws.String("/dev/xvda"), Ebs: &types.LaunchTemplateEbsBlockDeviceRequest{SnapshotId: aws.String("snap-1"),
				VolumeInitializationRate: aws.Int32(0)}}}},
	} {
		_, err := c.CreateLaunchTemplate(context.Background(), &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("zero-" + name), LaunchTemplateData: data})
		if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "Value (0) for parameter "+name) {
			t.Errorf("%s 0: %v", name, err)
		}
	}
}

// fleetFallsBack launches one instance from the template with two
// overrides in us-east-1a: EC2 refuses the first, a type the template's
// option does not run on (UnsupportedOperation), and launches the second;
// it returns the instance id.
func fleetFallsBack(t *testing.T, c *sdkec2.Client, sub map[string]string, lt, refused, launched string) string {
	t.Helper()
	ov := func(it string) types.FleetLaunchTemplateOverridesRequest {
		return types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(it), SubnetId: aws.String(sub["us-east-1a"])}
	}
	out, err := c.CreateFleet(context.Background(), fleetFrom(lt, "on-demand", ov(refused), ov(launched)))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || string(out.Instances[0].InstanceType) != launched || len(out.Errors) != 1 ||
		aws.ToString(out.Errors[0].ErrorCode) != ec2.CodeUnsupportedOperation || string(out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType) != refused {
		t.Fatalf("fleet %+v, errors %+v: want %s launched, %s refused", out.Instances, out.Errors, launched, refused)
	}
	return out.Instances[0].InstanceIds[0]
}
