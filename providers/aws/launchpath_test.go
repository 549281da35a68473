package aws_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simeks "github.com/joinery/joinery/sim/eks"
	simiam "github.com/joinery/joinery/sim/iam"
	simssm "github.com/joinery/joinery/sim/ssm"
)

type launchWorld struct {
	ec2 *simec2.Server
	iam *simiam.Server
	ssm *simssm.Server
	eks *simeks.Server
	c   *aws.Client
}

// newLaunchWorld starts EC2, IAM, SSM and EKS endpoints wired as the local
// world wires them, and a client using all four over HTTP.
// imageAndGroup are the AL2023 x86 image and the example's security group
// a launch template is made of.
func (w *launchWorld) imageAndGroup(t *testing.T) (img, sg string) {
	t.Helper()
	ctx := context.Background()
	img, _, _ = w.c.GetParameter(ctx, al2023x86)
	sgs, err := w.c.SecurityGroups(ctx, exampleTerms)
	if err != nil || len(sgs) == 0 {
		t.Fatalf("security groups %v: %v", sgs, err)
	}
	return img, sgs[0].ID
}

func newLaunchWorld(t *testing.T) *launchWorld {
	t.Helper()
	w := &launchWorld{iam: simiam.New(simiam.Options{})}
	var url string
	w.ec2, url = endpoint(t, simec2.Options{InstanceProfile: w.iam.InstanceProfileARN})
	w.ssm = simssm.New(simssm.Options{Source: w.ec2.SSMParameter})
	w.eks = simeks.New(simeks.Options{Cluster: simeks.Cluster{Name: cluster, Endpoint: "https://127.0.0.1:6443",
		CAData: base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\n")), ServiceIPv4CIDR: "10.0.0.0/24", Version: "1.37"}})
	start := func(s interface {
		Start(string) (string, func(), error)
	}) string {
		u, stop, err := s.Start("")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		return u
	}
	w.c = client(t, url, aws.Options{SSMEndpoint: start(w.ssm), IAMEndpoint: start(w.iam), EKSEndpoint: start(w.eks)})
	return w
}

const al2023x86 = "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"

func TestGetParameterAndDescribeImages(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	id, found, err := w.c.GetParameter(ctx, al2023x86)
	if err != nil || !found || !strings.HasPrefix(id, "ami-0") {
		t.Fatalf("GetParameter: %q %v %v", id, found, err)
	}
	if _, found, err := w.c.GetParameter(ctx, "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/neuron/recommended/image_id"); found || err != nil {
		t.Errorf("missing parameter: found=%v err=%v", found, err)
	}
	imgs, err := w.c.DescribeImages(ctx, aws.ImageQuery{IDs: []string{id}})
	if err != nil || len(imgs) != 1 || imgs[0].Name != "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101" ||
		imgs[0].Architecture != "x86_64" || imgs[0].OwnerID != simec2.EKSImageOwner || imgs[0].Deprecated {
		t.Fatalf("DescribeImages by id: %+v, %v", imgs, err)
	}
	byName, err := w.c.DescribeImages(ctx, aws.ImageQuery{Names: []string{"amazon-eks-node-al2023-*-nvidia-1.37-*"}, Owners: []string{"amazon"}})
	if err != nil || len(byName) != 4 || byName[0].CreationDate < byName[3].CreationDate {
		t.Fatalf("DescribeImages by name: %+v, %v", byName, err)
	}

	// A new release repoints recommended; SSM follows EC2.
	if _, err := w.ec2.PublishImageRelease("v20261201"); err != nil {
		t.Fatal(err)
	}
	newID, _, err := w.c.GetParameter(ctx, al2023x86)
	if err != nil || newID == id {
		t.Errorf("after publish: %s (was %s), %v", newID, id, err)
	}
	w.ec2.DeprecateImage(id, w.ec2.Images()[0].CreationDate)
	old, err := w.c.DescribeImages(ctx, aws.ImageQuery{IDs: []string{id}})
	if err != nil || len(old) != 1 || !old[0].Deprecated {
		t.Errorf("deprecated image: %+v, %v", old, err)
	}
}

func TestEnsureLaunchTemplateAndLaunch(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	if err := w.c.EnsureInstanceProfile(ctx, aws.InstanceProfile{Name: cluster + "_123", Path: "/joinery/", Role: simiam.DefaultRole,
		Tags: map[string]string{"joinery.sh/cluster": cluster}}); err != nil {
		t.Fatal(err)
	}
	img, sg := w.imageAndGroup(t)
	size := resource.MustParse("50Gi")
	hop, tokens := int64(1), "required"
	ud := base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n"))
	d := aws.LaunchTemplateData{ImageID: img, UserData: ud, InstanceProfile: cluster + "_123", SecurityGroupIDs: []string{sg},
		BlockDevices:    []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda", EBS: &apiv1.EBS{VolumeSize: &size, VolumeType: "gp3"}}},
		MetadataOptions: &apiv1.MetadataOptions{HTTPPutResponseHopLimit: &hop, HTTPTokens: &tokens},
		Tags:            map[string]string{"karpenter.k8s.aws/ec2nodeclass": "default"}}
	lt, err := w.c.EnsureLaunchTemplate(ctx, "joinery/abc", d)
	if err != nil || lt.Tags[apiv1.TagCluster] != cluster || lt.Tags["karpenter.k8s.aws/ec2nodeclass"] != "default" {
		t.Fatalf("EnsureLaunchTemplate: %+v, %v", lt, err)
	}
	again, err := w.c.EnsureLaunchTemplate(ctx, "joinery/abc", d)
	if err != nil || again.ID != lt.ID {
		t.Errorf("second Ensure: %+v, %v", again, err)
	}
	stored, _ := w.ec2.LaunchTemplate(lt.ID)
	if stored.Data.ImageID != img || stored.Data.UserData != ud || stored.Data.IamInstanceProfileName != cluster+"_123" ||
		!slices.Equal(stored.Data.SecurityGroupIDs, []string{sg}) || stored.Data.BlockDevices[0].VolumeSize != 50 ||
		stored.Data.MetadataOptions.HTTPTokens != "required" {
		t.Errorf("stored template %+v", stored.Data)
	}

	req := launchReq(subnets(t, w.c), apiv1.CapacityTypeOnDemand, "m5.large")
	req.LaunchTemplateName = "joinery/abc"
	in, err := w.c.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := w.ec2.Instance(in.ID)
	if got.ImageID != img || got.UserData != ud || got.IAMInstanceProfile != cluster+"_123" ||
		got.IAMInstanceProfileArn != "arn:aws:iam::123456789012:instance-profile/joinery/"+cluster+"_123" {
		t.Errorf("instance %+v", got)
	}

	lts, err := w.c.LaunchTemplates(ctx)
	if err != nil || len(lts) != 1 || lts[0].ID != lt.ID {
		t.Errorf("LaunchTemplates: %+v, %v (joinery-default has no cluster tag)", lts, err)
	}
	if err := w.c.DeleteLaunchTemplate(ctx, lt.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DeleteLaunchTemplate(ctx, lt.ID); err != nil {
		t.Errorf("deleting a deleted template: %v", err)
	}
	if _, err := w.c.Launch(ctx, req); err == nil || !strings.Contains(err.Error(), "InvalidLaunchTemplateName.NotFoundException") {
		t.Errorf("launch from a deleted template: %v", err)
	}
}

func TestInstanceProfileLifecycle(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	w.iam.AddRole("OtherRole")
	p := aws.InstanceProfile{Name: "prof", Path: "/karpenter/us-east-1/" + cluster + "/", Role: simiam.DefaultRole,
		Tags: map[string]string{"eks:eks-cluster-name": cluster}}
	if _, found, err := w.c.GetInstanceProfile(ctx, "prof"); found || err != nil {
		t.Fatalf("before: found=%v %v", found, err)
	}
	if err := w.c.EnsureInstanceProfile(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := w.c.EnsureInstanceProfile(ctx, p); err != nil {
		t.Fatalf("idempotent Ensure: %v", err)
	}
	got, found, err := w.c.GetInstanceProfile(ctx, "prof")
	if err != nil || !found || got.Role != simiam.DefaultRole || got.Path != p.Path || got.Tags["eks:eks-cluster-name"] != cluster {
		t.Fatalf("Get: %+v %v %v", got, found, err)
	}
	p.Role = "arn:aws:iam::123456789012:role/OtherRole"
	if err := w.c.EnsureInstanceProfile(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := w.c.GetInstanceProfile(ctx, "prof"); got.Role != "OtherRole" {
		t.Errorf("role after swap %q", got.Role)
	}
	p.Role = "NoSuchRole"
	if err := w.c.EnsureInstanceProfile(ctx, p); err == nil || !strings.Contains(err.Error(), "NoSuchEntity") {
		t.Errorf("unknown role: %v", err)
	}
	if err := w.c.DeleteInstanceProfile(ctx, "prof"); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DeleteInstanceProfile(ctx, "prof"); err != nil {
		t.Errorf("deleting a deleted profile: %v", err)
	}
	if len(w.iam.InstanceProfiles()) != 0 {
		t.Errorf("left %+v", w.iam.InstanceProfiles())
	}
}

func TestDescribeCluster(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	info, err := w.c.DescribeCluster(ctx, cluster)
	if err != nil || info.Endpoint != "https://127.0.0.1:6443" || info.ServiceCIDR != "10.0.0.0/24" ||
		info.CABundle != base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\n")) {
		t.Fatalf("%+v, %v", info, err)
	}
	if _, err := w.c.DescribeCluster(ctx, "other"); err == nil || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Errorf("other cluster: %v", err)
	}
	w.eks.SetCluster(simeks.Cluster{Name: cluster, Status: "CREATING"})
	if _, err := w.c.DescribeCluster(ctx, cluster); err == nil || !strings.Contains(err.Error(), "CREATING") {
		t.Errorf("creating cluster: %v", err)
	}
}

// TestInsufficientCapacityOnlyWhenEveryOverrideLacksCapacity: one override
// without capacity and one refused for another reason (an x86_64 image for
// an arm64 type) is a launch error, not insufficient capacity; when every
// override lacks capacity it is.
func TestInsufficientCapacityOnlyWhenEveryOverrideLacksCapacity(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, _, _ := w.c.GetParameter(ctx, al2023x86)
	if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/ice", aws.LaunchTemplateData{ImageID: img}); err != nil {
		t.Fatal(err)
	}
	sn := subnets(t, w.c)[:1]
	w.ec2.SetInsufficientCapacity("m5.large", sn[0].Zone, apiv1.CapacityTypeOnDemand, true)
	req := launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.large", "m7g.large")
	req.LaunchTemplateName = "joinery/ice"
	_, err := w.c.Launch(ctx, req)
	if err == nil || aws.IsInsufficientCapacity(err) || !strings.Contains(err.Error(), "InvalidParameterValue") {
		t.Fatalf("ICE on m5.large and an arm64 type on an x86_64 image: got %v, want a launch error naming InvalidParameterValue", err)
	}
	w.ec2.SetInsufficientCapacity("m6i.large", sn[0].Zone, apiv1.CapacityTypeOnDemand, true)
	req = launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.large", "m6i.large")
	req.LaunchTemplateName = "joinery/ice"
	if _, err := w.c.Launch(ctx, req); !aws.IsInsufficientCapacity(err) {
		t.Fatalf("every override without capacity: got %v, want insufficient capacity", err)
	}
}

// The class's launch fields reach EC2 as Karpenter's launch templates
// carry them (monitoring, the primary interface's public IP choice and
// connection tracking, a volume's initialization rate; CreateFleet's
// Context), and the instance is launched with them; EC2 refuses values out
// of its ranges.
func TestLaunchTemplateCarriesTheClassLaunchFields(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, sg := w.imageAndGroup(t)
	size := resource.MustParse("50Gi")
	public, tcp, udp, rate := true, int32(3600), int32(45), int32(200)
	d := aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}, DetailedMonitoring: true,
		AssociatePublicIPAddress: &public, ConnectionTracking: &apiv1.ConnectionTracking{TCPEstablishedTimeout: &tcp, UDPTimeout: &udp},
		BlockDevices: []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda",
			EBS: &apiv1.EBS{VolumeSize: &size, VolumeType: "gp3", SnapshotID: "snap-0123456789abcdef0", VolumeInitializationRate: &rate}}}}
	lt, err := w.c.EnsureLaunchTemplate(ctx, "joinery/fields", d)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := w.ec2.LaunchTemplate(lt.ID)
	ct := stored.Data.ConnectionTracking
	if !stored.Data.DetailedMonitoring || stored.Data.AssociatePublicIPAddress == nil || !*stored.Data.AssociatePublicIPAddress ||
		ct == nil || ct.TCPEstablished != 3600 || ct.UDP != 45 || ct.UDPStream != 0 || stored.Data.BlockDevices[0].InitializationRate != 200 ||
		!slices.Equal(stored.Data.SecurityGroupIDs, []string{sg}) {
		t.Errorf("stored template %+v (connection tracking %+v)", stored.Data, ct)
	}
	req := launchReq(subnets(t, w.c), apiv1.CapacityTypeOnDemand, "m5.large")
	req.LaunchTemplateName, req.Context = "joinery/fields", "c-0123"
	w.ec2.SetRecording(true)
	in, err := w.c.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	fleets := 0
	for _, r := range w.ec2.Requests() {
		if r.Action == "CreateFleet" {
			if fleets++; r.Params.Get("Context") != "c-0123" {
				t.Errorf("CreateFleet Context %q, want c-0123", r.Params.Get("Context"))
			}
		}
	}
	if fleets != 1 {
		t.Errorf("%d CreateFleet calls recorded, want 1", fleets)
	}
	got, _ := w.ec2.Instance(in.ID)
	if !got.DetailedMonitoring || got.PublicIP == "" {
		t.Errorf("instance: monitoring %v, public IP %q", got.DetailedMonitoring, got.PublicIP)
	}

	// Without the fields: basic monitoring, no public address (the local
	// subnets map none on launch), EC2's timeouts.
	plain := aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}}
	if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/plain", plain); err != nil {
		t.Fatal(err)
	}
	req.LaunchTemplateName, req.Context, req.NodeClaim = "joinery/plain", "", "general-purpose-def34"
	in, err = w.c.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); got.DetailedMonitoring || got.PublicIP != "" {
		t.Errorf("plain instance: monitoring %v, public IP %q", got.DetailedMonitoring, got.PublicIP)
	}

	for name, bad := range map[string]func(*aws.LaunchTemplateData){
		"InvalidParameterValue: Value (20) for parameter UdpTimeout": func(d *aws.LaunchTemplateData) {
			low := int32(20)
			d.ConnectionTracking = &apiv1.ConnectionTracking{UDPTimeout: &low}
		},
		"InvalidParameterValue: Value (500) for parameter VolumeInitializationRate": func(d *aws.LaunchTemplateData) {
			fast := int32(500)
			d.BlockDevices = []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda", EBS: &apiv1.EBS{SnapshotID: "snap-1", VolumeInitializationRate: &fast}}}
		},
		"InvalidParameterCombination: The parameter VolumeInitializationRate": func(d *aws.LaunchTemplateData) {
			d.BlockDevices = []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda", EBS: &apiv1.EBS{VolumeSize: &size, VolumeInitializationRate: &rate}}}
		},
	} {
		d := plain
		bad(&d)
		if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/bad", d); err == nil || !strings.Contains(err.Error(), strings.SplitN(name, ": ", 2)[0]) ||
			!strings.Contains(err.Error(), strings.SplitN(name, ": ", 2)[1]) {
			t.Errorf("want %s: %v", name, err)
		}
	}
}

// spec.ipPrefixCount reaches the template as Karpenter's provider puts it
// (the primary interface's Ipv4PrefixCount, beside its security groups),
// 0 included, and the instance gets its prefixes from the subnet; a count
// the type's interface cannot hold is refused per override.
func TestLaunchTemplateCarriesThePrefixCount(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, sg := w.imageAndGroup(t)
	for _, n := range []int32{0, 3} {
		name := fmt.Sprintf("joinery/prefixes-%d", n)
		d := aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}, IPv4PrefixCount: &n}
		lt, err := w.c.EnsureLaunchTemplate(ctx, name, d)
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := w.ec2.LaunchTemplate(lt.ID)
		if c := stored.Data.IPv4PrefixCount; c == nil || *c != int64(n) || stored.Data.IPv6PrefixCount != nil ||
			!slices.Equal(stored.Data.SecurityGroupIDs, []string{sg}) {
			t.Errorf("count %d: stored template %+v", n, stored.Data)
		}
		req := launchReq(subnets(t, w.c), apiv1.CapacityTypeOnDemand, "m5.large")
		req.LaunchTemplateName, req.NodeClaim = name, fmt.Sprintf("general-purpose-p%d", n)
		in, err := w.c.Launch(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := w.ec2.Instance(in.ID); len(got.IPv4Prefixes) != int(n) {
			t.Errorf("count %d: instance prefixes %v", n, got.IPv4Prefixes)
		}
	}
	many := int32(12) // an m5.large interface has 10 address slots
	if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/prefixes-12", aws.LaunchTemplateData{ImageID: img, IPv4PrefixCount: &many}); err != nil {
		t.Fatal(err)
	}
	req := launchReq(subnets(t, w.c), apiv1.CapacityTypeOnDemand, "m5.large")
	req.LaunchTemplateName, req.NodeClaim = "joinery/prefixes-12", "general-purpose-p12"
	if _, err := w.c.Launch(ctx, req); err == nil || !strings.Contains(err.Error(), "PrivateIpAddressLimitExceeded") {
		t.Errorf("12 prefixes on an m5.large: %v", err)
	}
}
