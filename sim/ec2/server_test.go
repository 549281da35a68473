package ec2_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/joinery/joinery/internal/testwait"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/ec2"
)

// start serves a new endpoint on 127.0.0.1 and returns it with a real SDK
// client pointed at it (no retries, so faults are visible).
func start(t *testing.T, opts ec2.Options) (*ec2.Server, *sdkec2.Client) {
	t.Helper()
	if opts.BootDelay == 0 {
		opts.BootDelay = 50 * time.Millisecond
	}
	if opts.TerminateDelay == 0 {
		opts.TerminateDelay = 50 * time.Millisecond
	}
	srv := ec2.New(opts)
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	// The template the fleet helper launches from: the x86_64 AL2023 image.
	if _, err := srv.CreateLaunchTemplate("test-lt", ec2.LaunchTemplateData{ImageID: recommended(t, srv, "x86_64", "standard")}, nil); err != nil {
		t.Fatal(err)
	}
	client := sdkec2.New(sdkec2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   bufferedBodies{awshttp.NewBuildableClient()},
	})
	return srv, client
}

// recommended is the AL2023 image the SSM recommended parameter points at.
func recommended(t *testing.T, srv *ec2.Server, arch, variant string) string {
	t.Helper()
	id, _, _, ok := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/" + arch + "/" + variant + "/recommended/image_id")
	if !ok {
		t.Fatalf("no recommended %s %s image", arch, variant)
	}
	return id
}

// bufferedBodies sends each request body from memory. Without it the SDK
// closes the request body as soon as response headers arrive; against a
// fast local server that races net/http's end-of-body check, which then
// closes the connection under the response being read ("use of closed
// network connection", aws-sdk-go-v2 #1825/#2737). cloud.New does the same.
type bufferedBodies struct{ next sdkec2.HTTPClient }

func (b bufferedBodies) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
	}
	return b.next.Do(req)
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// fleet builds an instant CreateFleet input with one override per
// (type, subnet) pair, in the order given.
func fleet(capacityType string, total int32, typesAndSubnets [][2]string, tags map[string]string) *sdkec2.CreateFleetInput {
	var ov []types.FleetLaunchTemplateOverridesRequest
	for _, ts := range typesAndSubnets {
		ov = append(ov, types.FleetLaunchTemplateOverridesRequest{InstanceType: types.InstanceType(ts[0]), SubnetId: aws.String(ts[1])})
	}
	var tagList []types.Tag
	for k, v := range tags {
		tagList = append(tagList, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	in := &sdkec2.CreateFleetInput{
		Type: types.FleetTypeInstant,
		LaunchTemplateConfigs: []types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("test-lt"), Version: aws.String("$Latest")},
			Overrides:                   ov,
		}},
		TargetCapacitySpecification: &types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(total), DefaultTargetCapacityType: types.DefaultTargetCapacityType(capacityType),
		},
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance, Tags: tagList}},
	}
	if capacityType == "spot" {
		in.SpotOptions = &types.SpotOptionsRequest{AllocationStrategy: types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		in.OnDemandOptions = &types.OnDemandOptionsRequest{AllocationStrategy: types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	return in
}

// subnetsByZone returns zone → subnet id from DescribeSubnets.
func subnetsByZone(t *testing.T, c *sdkec2.Client) map[string]string {
	t.Helper()
	out, err := c.DescribeSubnets(context.Background(), &sdkec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, sn := range out.Subnets {
		m[aws.ToString(sn.AvailabilityZone)] = aws.ToString(sn.SubnetId)
	}
	return m
}

func TestDescribeInstanceTypes(t *testing.T) {
	_, c := start(t, ec2.Options{})
	ctx := context.Background()
	out, err := c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{
		InstanceTypes: []types.InstanceType{"m5.large", "m7g.large", "g5.xlarge"},
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]types.InstanceTypeInfo{}
	for _, it := range out.InstanceTypes {
		byName[string(it.InstanceType)] = it
	}
	m5 := byName["m5.large"]
	if got := aws.ToInt32(m5.VCpuInfo.DefaultVCpus); got != 2 {
		t.Errorf("m5.large vCPU = %d, want 2", got)
	}
	if got := aws.ToInt64(m5.MemoryInfo.SizeInMiB); got != 8192 {
		t.Errorf("m5.large memory = %d MiB, want 8192", got)
	}
	if got := m5.ProcessorInfo.SupportedArchitectures; !slices.Equal(got, []types.ArchitectureType{types.ArchitectureTypeX8664}) {
		t.Errorf("m5.large architectures = %v", got)
	}
	if m5.GpuInfo != nil {
		t.Errorf("m5.large has GpuInfo %+v", m5.GpuInfo)
	}
	if got := byName["m7g.large"].ProcessorInfo.SupportedArchitectures; !slices.Equal(got, []types.ArchitectureType{types.ArchitectureTypeArm64}) {
		t.Errorf("m7g.large architectures = %v", got)
	}
	g5 := byName["g5.xlarge"]
	if g5.GpuInfo == nil || len(g5.GpuInfo.Gpus) != 1 {
		t.Fatalf("g5.xlarge GpuInfo = %+v", g5.GpuInfo)
	}
	gpu := g5.GpuInfo.Gpus[0]
	g5cat, _ := catalog.MustDefault().Get("g5.xlarge")
	if aws.ToString(gpu.Name) != "A10G" || aws.ToString(gpu.Manufacturer) != "NVIDIA" || aws.ToInt32(gpu.Count) != 1 ||
		int64(aws.ToInt32(gpu.MemoryInfo.SizeInMiB)) != g5cat.GPUMemoryMiB || g5cat.GPUMemoryMiB == 0 {
		t.Errorf("g5.xlarge GPU = %s %s x%d %d MiB", aws.ToString(gpu.Manufacturer), aws.ToString(gpu.Name),
			aws.ToInt32(gpu.Count), aws.ToInt32(gpu.MemoryInfo.SizeInMiB))
	}

	_, err = c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{"m5.huge"}})
	if apiCode(err) != "InvalidInstanceType" || httpStatus(err) != 400 {
		t.Errorf("unknown type: err = %v (status %d)", err, httpStatus(err))
	}
}

func TestDescribeInstanceTypesPaginationAndFilters(t *testing.T) {
	_, c := start(t, ec2.Options{})
	ctx := context.Background()
	cat := catalog.MustDefault()
	var names []string
	pages := 0
	p := sdkec2.NewDescribeInstanceTypesPaginator(c, &sdkec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.InstanceTypes) > 100 {
			t.Fatalf("page of %d > MaxResults 100", len(page.InstanceTypes))
		}
		pages++
		for _, it := range page.InstanceTypes {
			names = append(names, string(it.InstanceType))
		}
	}
	if len(names) != len(cat.Types) {
		t.Fatalf("paginated %d types, catalog has %d", len(names), len(cat.Types))
	}
	if want := (len(cat.Types) + 99) / 100; pages != want {
		t.Errorf("pages = %d, want %d", pages, want)
	}
	if !sort.StringsAreSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("types not unique and sorted")
	}

	out, err := c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{Filters: []types.Filter{
		{Name: aws.String("instance-type"), Values: []string{"m5.*"}},
		{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var want int
	for _, it := range cat.Types {
		if it.Family == "m5" {
			want++
		}
	}
	if len(out.InstanceTypes) != want || want == 0 {
		t.Errorf("m5.* filter: %d types, want %d", len(out.InstanceTypes), want)
	}
	for _, it := range out.InstanceTypes {
		if !strings.HasPrefix(string(it.InstanceType), "m5.") {
			t.Errorf("filter m5.* returned %s", it.InstanceType)
		}
	}
	_, err = c.DescribeInstanceTypes(ctx, &sdkec2.DescribeInstanceTypesInput{Filters: []types.Filter{
		{Name: aws.String("no-such-filter"), Values: []string{"x"}}}})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: err = %v", err)
	}
}

func TestDescribeInstanceTypeOfferings(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	cat := catalog.MustDefault()
	perZone := map[string]int{}
	p := sdkec2.NewDescribeInstanceTypeOfferingsPaginator(c, &sdkec2.DescribeInstanceTypeOfferingsInput{
		LocationType: types.LocationTypeAvailabilityZone,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.InstanceTypeOfferings {
			if o.LocationType != types.LocationTypeAvailabilityZone {
				t.Fatalf("location type %q", o.LocationType)
			}
			perZone[aws.ToString(o.Location)]++
		}
	}
	for _, z := range catalog.DefaultZones {
		want := 0
		for _, it := range cat.Types {
			if srv.Offered(it.Name, z) {
				want++
			}
		}
		if perZone[z] != want {
			t.Errorf("zone %s offers %d types, want %d", z, perZone[z], want)
		}
	}
	// The local world's rule (DefaultNotOffered): us-east-1b sells every
	// type, 1a lacks the c6in/m6in/r6in families and 1c c7a/m7a/r7a.
	if perZone["us-east-1b"] != len(cat.Types) || perZone["us-east-1a"] >= len(cat.Types) || perZone["us-east-1c"] >= len(cat.Types) {
		t.Errorf("types per zone %v of %d", perZone, len(cat.Types))
	}
	if len(perZone) != len(catalog.DefaultZones) {
		t.Errorf("zones = %v", perZone)
	}
}

func TestSubnetsAndSecurityGroupsByDiscoveryTag(t *testing.T) {
	_, c := start(t, ec2.Options{ClusterTag: "production-eks"})
	ctx := context.Background()
	sn, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{Filters: []types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"production-eks"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, s := range sn.Subnets {
		zones = append(zones, aws.ToString(s.AvailabilityZone))
		if !strings.HasPrefix(aws.ToString(s.SubnetId), "subnet-0") || aws.ToInt32(s.AvailableIpAddressCount) <= 0 {
			t.Errorf("subnet %+v", s)
		}
	}
	sort.Strings(zones)
	if !slices.Equal(zones, catalog.DefaultZones) {
		t.Errorf("subnet zones = %v, want %v", zones, catalog.DefaultZones)
	}
	none, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{Filters: []types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"staging-eks"}}}})
	if err != nil || len(none.Subnets) != 0 {
		t.Errorf("other cluster: %d subnets, err %v", len(none.Subnets), err)
	}
	one, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{aws.ToString(sn.Subnets[1].SubnetId)}})
	if err != nil || len(one.Subnets) != 1 || aws.ToString(one.Subnets[0].SubnetId) != aws.ToString(sn.Subnets[1].SubnetId) {
		t.Errorf("by id: %+v, %v", one.Subnets, err)
	}
	_, err = c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0000000000000000f"}})
	if apiCode(err) != "InvalidSubnetID.NotFound" {
		t.Errorf("unknown subnet: %v", err)
	}

	all, err := c.DescribeSecurityGroups(ctx, &sdkec2.DescribeSecurityGroupsInput{})
	if err != nil || len(all.SecurityGroups) != 2 {
		t.Fatalf("all groups: %d, %v", len(all.SecurityGroups), err)
	}
	sg, err := c.DescribeSecurityGroups(ctx, &sdkec2.DescribeSecurityGroupsInput{Filters: []types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"production-eks"}}}})
	if err != nil || len(sg.SecurityGroups) != 1 || aws.ToString(sg.SecurityGroups[0].GroupName) == "default" {
		t.Errorf("tagged groups: %+v, %v", sg.SecurityGroups, err)
	}
}

func TestCreateFleetPicksCheapestPoolWithCapacity(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	cat := catalog.MustDefault()
	// Sent most expensive first: the lowest-price strategy must still pick m5.large.
	req := fleet("on-demand", 1, [][2]string{
		{"m5.2xlarge", sub["us-east-1a"]}, {"m5.xlarge", sub["us-east-1a"]}, {"m5.large", sub["us-east-1a"]}, {"m5.large", sub["us-east-1b"]},
	}, map[string]string{"team": "a"})
	out, err := c.CreateFleet(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 0 || len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 {
		t.Fatalf("CreateFleet = %+v", out)
	}
	fi := out.Instances[0]
	if fi.InstanceType != "m5.large" || fi.Lifecycle != types.InstanceLifecycleOnDemand ||
		aws.ToString(fi.LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1a"] ||
		aws.ToString(fi.LaunchTemplateAndOverrides.LaunchTemplateSpecification.LaunchTemplateName) != "test-lt" {
		t.Errorf("launched %+v / %+v", fi, fi.LaunchTemplateAndOverrides.Overrides)
	}
	in, ok := srv.Instance(fi.InstanceIds[0])
	m5, _ := cat.Get("m5.large")
	if !ok || in.Zone != "us-east-1a" || in.Price != m5.OnDemandPrice || in.Tags["team"] != "a" ||
		in.Tags["aws:ec2:fleet-id"] != aws.ToString(out.FleetId) || in.State != ec2.StatePending ||
		!strings.HasPrefix(in.PrivateDNSName, "ip-10-0-") || !strings.HasSuffix(in.PrivateDNSName, ".ec2.internal") {
		t.Errorf("server instance %+v", in)
	}
	if len(in.ID) != len("i-0")+16 || !strings.HasPrefix(in.ID, "i-0") {
		t.Errorf("instance id %q", in.ID)
	}

	// Spot: the cheapest spot pool among the types, by the zone's spot price.
	cands := []string{"c5.large", "m5.large", "r5.large", "c6i.large"}
	cheapest := cands[0]
	for _, n := range cands {
		a, _ := srv.SpotPrice(n, "us-east-1c")
		b, _ := srv.SpotPrice(cheapest, "us-east-1c")
		if a < b {
			cheapest = n
		}
	}
	var ov [][2]string
	for _, n := range cands {
		ov = append(ov, [2]string{n, sub["us-east-1c"]})
	}
	out, err = c.CreateFleet(ctx, fleet("spot", 1, ov, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || string(out.Instances[0].InstanceType) != cheapest || out.Instances[0].Lifecycle != types.InstanceLifecycleSpot {
		t.Fatalf("spot launched %+v, want %s", out.Instances, cheapest)
	}
	d, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	got := d.Reservations[0].Instances[0]
	if got.InstanceLifecycle != types.InstanceLifecycleTypeSpot || aws.ToString(got.Placement.AvailabilityZone) != "us-east-1c" ||
		got.Architecture != types.ArchitectureValuesX8664 || got.LaunchTime == nil {
		t.Errorf("described spot instance %+v", got)
	}
}

func TestCreateFleetInsufficientCapacity(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	ov := [][2]string{{"m5.large", sub["us-east-1a"]}, {"m5.large", sub["us-east-1b"]}, {"m5.xlarge", sub["us-east-1a"]}}

	// 1a's spot m5.large is the cheapest, 1b's the next.
	for zone, price := range map[string]float64{"us-east-1a": 0.03, "us-east-1b": 0.031} {
		if err := srv.SetSpotPrice("m5.large", zone, price); err != nil {
			t.Fatal(err)
		}
	}
	srv.SetInsufficientCapacity("m5.large", "us-east-1a", "spot", true)
	out, err := c.CreateFleet(ctx, fleet("spot", 1, ov, nil))
	if err != nil {
		t.Fatal(err)
	}
	// Partial result: the instance from the next pool, and the error of the one tried first.
	if len(out.Instances) != 1 || aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1b"] ||
		out.Instances[0].InstanceType != "m5.large" {
		t.Fatalf("instances %+v", out.Instances)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientInstanceCapacity" ||
		aws.ToString(out.Errors[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1a"] ||
		out.Errors[0].Lifecycle != types.InstanceLifecycleSpot {
		t.Fatalf("errors %+v", out.Errors)
	}

	// The same pool is fine on demand.
	out, err = c.CreateFleet(ctx, fleet("on-demand", 1, ov, nil))
	if err != nil || len(out.Errors) != 0 || aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1a"] {
		t.Fatalf("on-demand: %+v, %v", out, err)
	}

	srv.SetInsufficientCapacity("", "", "spot", true)
	before := len(srv.Instances())
	out, err = c.CreateFleet(ctx, fleet("spot", 1, ov, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(out.Errors) != len(ov) {
		t.Fatalf("ICE everywhere: %d instances, %d errors", len(out.Instances), len(out.Errors))
	}
	for i, e := range out.Errors {
		if aws.ToString(e.ErrorCode) != "InsufficientInstanceCapacity" || string(e.LaunchTemplateAndOverrides.Overrides.InstanceType) != ov[i][0] {
			t.Errorf("error %d: %s %s", i, aws.ToString(e.ErrorCode), e.LaunchTemplateAndOverrides.Overrides.InstanceType)
		}
	}
	if len(srv.Instances()) != before {
		t.Errorf("instances launched despite ICE")
	}

	srv.ClearInsufficientCapacity()
	srv.SetICEFraction(1)
	out, err = c.CreateFleet(ctx, fleet("on-demand", 1, ov, nil))
	if err != nil || len(out.Instances) != 0 || len(out.Errors) != 3 {
		t.Fatalf("ICE fraction 1: %+v, %v", out, err)
	}
}

func TestCreateFleetMultipleAndIdempotent(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	req := fleet("on-demand", 3, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)
	req.ClientToken = aws.String("token-1")
	out, err := c.CreateFleet(ctx, req)
	if err != nil || len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 3 {
		t.Fatalf("%+v, %v", out, err)
	}
	again, err := c.CreateFleet(ctx, req)
	if err != nil || !slices.Equal(again.Instances[0].InstanceIds, out.Instances[0].InstanceIds) {
		t.Fatalf("retried token: %+v, %v", again, err)
	}
	if n := len(srv.Instances()); n != 3 {
		t.Errorf("%d instances after idempotent retry, want 3", n)
	}
	d, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if err != nil || len(d.Reservations) != 1 || len(d.Reservations[0].Instances) != 3 {
		t.Errorf("one reservation of three expected: %+v, %v", d, err)
	}
	req2 := fleet("on-demand", 2, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)
	req2.ClientToken = aws.String("token-1")
	if _, err := c.CreateFleet(ctx, req2); apiCode(err) != "IdempotentParameterMismatch" {
		t.Errorf("token reuse with other params: %v", err)
	}
	maintain := fleet("on-demand", 1, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)
	maintain.Type = types.FleetTypeMaintain
	if _, err := c.CreateFleet(ctx, maintain); apiCode(err) != "Unsupported" || httpStatus(err) != 400 {
		t.Errorf("Type=maintain: %v", err)
	}
}

func TestDescribeInstancesFiltersAndPagination(t *testing.T) {
	// Pending for the whole test, however loaded the machine.
	_, c := start(t, ec2.Options{BootDelay: 10 * time.Minute})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	launch := func(n int32, pool string) []string {
		out, err := c.CreateFleet(ctx, fleet("on-demand", n, [][2]string{{"m5.large", sub["us-east-1a"]}},
			map[string]string{"karpenter.sh/nodepool": pool, "joinery.sh/cluster": "c1"}))
		if err != nil {
			t.Fatal(err)
		}
		return out.Instances[0].InstanceIds
	}
	a := launch(7, "a")
	b := launch(2, "b")

	count := func(in *sdkec2.DescribeInstancesInput) (ids []string, pages int) {
		p := sdkec2.NewDescribeInstancesPaginator(c, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, r := range page.Reservations {
				for _, in := range r.Instances {
					ids = append(ids, aws.ToString(in.InstanceId))
				}
			}
		}
		return ids, pages
	}
	ids, pages := count(&sdkec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	if !slices.Equal(ids, append(slices.Clone(a), b...)) || pages != 2 {
		t.Errorf("paginated %v in %d pages, want %v then %v in 2", ids, pages, a, b)
	}
	ids, _ = count(&sdkec2.DescribeInstancesInput{MaxResults: aws.Int32(5), Filters: []types.Filter{
		{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{"b"}}}})
	if !slices.Equal(ids, b) {
		t.Errorf("tag filter: %v, want %v", ids, b)
	}
	ids, _ = count(&sdkec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/nodepool"}},
		{Name: aws.String("instance-id"), Values: []string{a[2], b[1], "i-0ffffffffffffffff"}}}})
	if !slices.Equal(ids, []string{a[2], b[1]}) {
		t.Errorf("tag-key + instance-id: %v", ids)
	}
	ids, _ = count(&sdkec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if len(ids) != 0 {
		t.Errorf("running before boot: %v", ids)
	}
	ids, _ = count(&sdkec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: aws.String("instance-state-name"), Values: []string{"pending"}}}})
	if len(ids) != 9 {
		t.Errorf("pending: %d, want 9", len(ids))
	}
	_, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: a[:1], MaxResults: aws.Int32(5)})
	if apiCode(err) != "InvalidParameterCombination" {
		t.Errorf("InstanceIds with MaxResults: %v", err)
	}
	_, err = c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{MaxResults: aws.Int32(2)})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("MaxResults 2: %v", err)
	}
	_, err = c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{a[0], "i-0123456789abcdef0"}})
	if apiCode(err) != "InvalidInstanceID.NotFound" || httpStatus(err) != 400 {
		t.Errorf("unknown id: %v", err)
	}

	if _, err := c.CreateTags(ctx, &sdkec2.CreateTagsInput{Resources: a[:2], Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("n1")}}}); err != nil {
		t.Fatal(err)
	}
	ids, _ = count(&sdkec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("tag:Name"), Values: []string{"n*"}}}})
	if !slices.Equal(ids, a[:2]) {
		t.Errorf("after CreateTags: %v", ids)
	}
	_, err = c.CreateTags(ctx, &sdkec2.CreateTagsInput{Resources: a[:1], Tags: []types.Tag{{Key: aws.String("aws:x"), Value: aws.String("y")}}})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("aws: tag key: %v", err)
	}
}

func TestLifecycleHooksAndTerminate(t *testing.T) {
	var mu sync.Mutex
	running := map[string]time.Time{}
	terminated := map[string]ec2.Instance{}
	const boot = 150 * time.Millisecond
	srv, c := start(t, ec2.Options{
		BootDelay: boot, TerminateDelay: 60 * time.Millisecond,
		OnRunning: func(in ec2.Instance) {
			mu.Lock()
			defer mu.Unlock()
			if in.State != ec2.StateRunning {
				t.Errorf("OnRunning with state %s", in.State)
			}
			running[in.ID] = time.Now()
		},
		OnTerminated: func(in ec2.Instance) {
			mu.Lock()
			defer mu.Unlock()
			terminated[in.ID] = in
		},
	})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	launched := time.Now()
	out, err := c.CreateFleet(ctx, fleet("on-demand", 2, [][2]string{{"c5.large", sub["us-east-1b"]}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ids := out.Instances[0].InstanceIds
	state := func(id string) types.InstanceStateName {
		d, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		return d.Reservations[0].Instances[0].State.Name
	}
	if s := state(ids[0]); s != types.InstanceStateNamePending {
		t.Fatalf("state right after launch = %s", s)
	}
	testwait.Eventually(t, "OnRunning for both", 2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(running) == 2
	})
	mu.Lock()
	for id, at := range running {
		if d := at.Sub(launched); d < boot {
			t.Errorf("%s running after %v, BootDelay is %v", id, d, boot)
		}
	}
	mu.Unlock()
	if s := state(ids[0]); s != types.InstanceStateNameRunning {
		t.Fatalf("state after boot = %s", s)
	}

	term, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[:1]})
	if err != nil {
		t.Fatal(err)
	}
	ch := term.TerminatingInstances[0]
	if ch.PreviousState.Name != types.InstanceStateNameRunning || ch.CurrentState.Name != types.InstanceStateNameShuttingDown ||
		aws.ToInt32(ch.CurrentState.Code) != 32 {
		t.Errorf("terminate change %+v -> %+v", ch.PreviousState, ch.CurrentState)
	}
	testwait.Eventually(t, "terminated", 2*time.Second, func() bool { return state(ids[0]) == types.InstanceStateNameTerminated })
	testwait.Eventually(t, "OnTerminated", time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return terminated[ids[0]].State == ec2.StateTerminated
	})
	// Idempotent: a terminated instance stays terminated.
	term, err = c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[:1]})
	if err != nil || term.TerminatingInstances[0].PreviousState.Name != types.InstanceStateNameTerminated ||
		term.TerminatingInstances[0].CurrentState.Name != types.InstanceStateNameTerminated {
		t.Errorf("second terminate: %+v, %v", term, err)
	}
	_, err = c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{ids[1], "i-0123456789abcdef0"}})
	if apiCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown id: %v", err)
	}
	if s := state(ids[1]); s != types.InstanceStateNameRunning {
		t.Errorf("a failed TerminateInstances changed %s to %s", ids[1], s)
	}
	_, err = c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{"not-an-id"}})
	if apiCode(err) != "InvalidInstanceID.Malformed" {
		t.Errorf("malformed id: %v", err)
	}

	// Terminating while pending: OnRunning never fires for it.
	out, err = c.CreateFleet(ctx, fleet("on-demand", 1, [][2]string{{"c5.large", sub["us-east-1b"]}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	pendingID := out.Instances[0].InstanceIds[0]
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{pendingID}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(boot + 50*time.Millisecond)
	mu.Lock()
	_, ran := running[pendingID]
	mu.Unlock()
	if ran {
		t.Errorf("OnRunning fired for an instance terminated while pending")
	}
	if in, _ := srv.Instance(pendingID); in.State != ec2.StateTerminated {
		t.Errorf("pending-then-terminated instance is %s", in.State)
	}
}

func TestThrottleLatencyAndCounters(t *testing.T) {
	srv, c := start(t, ec2.Options{ThrottleFraction: 1})
	ctx := context.Background()
	_, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{})
	if apiCode(err) != "RequestLimitExceeded" || httpStatus(err) != 503 {
		t.Fatalf("throttled call: %v (status %d)", err, httpStatus(err))
	}
	srv.SetThrottleFraction(0)
	srv.SetLatency(80 * time.Millisecond)
	t0 := time.Now()
	if _, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 80*time.Millisecond {
		t.Errorf("call took %v with 80ms latency", d)
	}
	if got := srv.Calls()["DescribeSubnets"]; got != 2 {
		t.Errorf("DescribeSubnets calls = %d, want 2", got)
	}
	if got := srv.ThrottledCalls()["DescribeSubnets"]; got != 1 {
		t.Errorf("throttled = %d, want 1", got)
	}
	srv.SetLatency(0)
	// An action the endpoint does not implement answers like EC2 does.
	_, err = c.DescribeVpcs(ctx, &sdkec2.DescribeVpcsInput{})
	if apiCode(err) != "InvalidAction" || httpStatus(err) != 400 {
		t.Errorf("DescribeVpcs: %v", err)
	}
	_, err = c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{DryRun: aws.Bool(true)})
	if apiCode(err) != "DryRunOperation" {
		t.Errorf("dry run: %v", err)
	}
}

func TestSameSeedSameAnswers(t *testing.T) {
	ids := func() []string {
		srv, c := start(t, ec2.Options{Seed: 42, ICEFraction: 0.5})
		sub := subnetsByZone(t, c)
		var out []string
		for range 5 {
			f, err := c.CreateFleet(context.Background(), fleet("spot", 1,
				[][2]string{{"m5.large", sub["us-east-1a"]}, {"m5.xlarge", sub["us-east-1a"]}, {"m5.2xlarge", sub["us-east-1a"]}}, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, fi := range f.Instances {
				out = append(out, string(fi.InstanceType)+"/"+fi.InstanceIds[0])
			}
			out = append(out, "errors:"+strconv.Itoa(len(f.Errors)))
		}
		srv.Close()
		return out
	}
	a, b := ids(), ids()
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different answers:\n%v\n%v", a, b)
	}
}

// SetPoolCapacity: three on-demand instances in the region, then
// InsufficientInstanceCapacity for every override; spot is another pool;
// a lifted limit lets two more launch; a type at 0 falls to another type.
func TestSetPoolCapacity(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	ov := [][2]string{{"g4dn.xlarge", sub["us-east-1a"]}, {"g4dn.xlarge", sub["us-east-1b"]}, {"g5.xlarge", sub["us-east-1a"]}}
	srv.SetPoolCapacity("", "", "on-demand", 3)
	for i := 0; i < 3; i++ {
		out, err := c.CreateFleet(ctx, fleet("on-demand", 1, ov, nil))
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("launch %d: %+v, %v", i, out, err)
		}
	}
	out, err := c.CreateFleet(ctx, fleet("on-demand", 1, ov, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(out.Errors) != len(ov) {
		t.Fatalf("fourth: %d instances, %d errors", len(out.Instances), len(out.Errors))
	}
	for _, e := range out.Errors {
		if aws.ToString(e.ErrorCode) != "InsufficientInstanceCapacity" {
			t.Errorf("error %s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
		}
	}
	// Spot is another pool.
	if out, err := c.CreateFleet(ctx, fleet("spot", 1, ov, nil)); err != nil || len(out.Instances) != 1 {
		t.Fatalf("spot: %+v, %v", out, err)
	}
	srv.SetPoolCapacity("", "", "on-demand", -1)
	if out, err := c.CreateFleet(ctx, fleet("on-demand", 2, ov, nil)); err != nil || len(out.Errors) != 0 {
		t.Fatalf("limit lifted: %+v, %v", out, err)
	}
	srv.SetPoolCapacity("g4dn.xlarge", "", "on-demand", 0)
	out, err = c.CreateFleet(ctx, fleet("on-demand", 1, ov, nil))
	if err != nil || len(out.Instances) != 1 || out.Instances[0].InstanceType != "g5.xlarge" {
		t.Fatalf("g4dn.xlarge at 0: %+v, %v", out, err)
	}
}
