package aws_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

const cluster = "production-eks"

// world starts the local EC2 endpoint and a cloud.Client pointed at it.
func world(t *testing.T, sopts simec2.Options, copts aws.Options) (*simec2.Server, *aws.Client) {
	srv, url := endpoint(t, sopts)
	return srv, client(t, url, copts)
}

func endpoint(t *testing.T, sopts simec2.Options) (*simec2.Server, string) {
	t.Helper()
	if sopts.ClusterTag == "" {
		sopts.ClusterTag = cluster
	}
	if sopts.BootDelay == 0 {
		sopts.BootDelay = 40 * time.Millisecond
	}
	if sopts.TerminateDelay == 0 {
		sopts.TerminateDelay = 40 * time.Millisecond
	}
	srv := simec2.New(sopts)
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	// The template launchReq names (CreateFleet refuses unknown ones).
	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	if _, err := srv.CreateLaunchTemplate("joinery-default", simec2.LaunchTemplateData{ImageID: img}, nil); err != nil {
		t.Fatal(err)
	}
	return srv, url
}

func client(t *testing.T, url string, copts aws.Options) *aws.Client {
	t.Helper()
	copts.Endpoint = url
	if copts.ClusterName == "" {
		copts.ClusterName = cluster
	}
	if copts.MaxBackoff == 0 {
		copts.MaxBackoff = 5 * time.Millisecond
	}
	c, err := aws.New(context.Background(), copts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exampleTerms are the EC2NodeClass subnet/security group selector terms of
// shared/examples/nodepools.yaml.
var exampleTerms = []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}}

func subnets(t *testing.T, c *aws.Client) []aws.Subnet {
	t.Helper()
	sn, err := c.Subnets(context.Background(), exampleTerms)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

func launchReq(sn []aws.Subnet, ct string, types ...string) aws.LaunchRequest {
	return aws.LaunchRequest{
		NodeClaim: "general-purpose-abc12", NodePool: "general-purpose", CapacityType: ct,
		InstanceTypes: types, Subnets: sn, LaunchTemplateName: "joinery-default",
		Tags: map[string]string{"team": "platform", apiv1.TagNodePool: "spoofed"},
	}
}

func TestNewRequiresClusterName(t *testing.T) {
	if _, err := aws.New(context.Background(), aws.Options{Endpoint: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("New without ClusterName succeeded")
	}
}

func TestSubnetsAndSecurityGroupsFromExampleSelectors(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	ctx := context.Background()
	sn := subnets(t, c)
	var zones []string
	for _, s := range sn {
		zones = append(zones, s.Zone)
		if !strings.HasPrefix(s.ID, "subnet-") || !strings.HasPrefix(s.ZoneID, "use1-az") || s.AvailableIPs <= 0 {
			t.Errorf("subnet %+v", s)
		}
	}
	if !slices.Equal(zones, catalog.DefaultZones) {
		t.Fatalf("zones %v, want one subnet in each of %v", zones, catalog.DefaultZones)
	}

	byID, err := c.Subnets(ctx, []apiv1.SelectorTerm{{ID: sn[2].ID}, {Tags: map[string]string{"karpenter.sh/discovery": "other"}}})
	if err != nil || len(byID) != 1 || byID[0] != sn[2] {
		t.Errorf("by id: %+v, %v", byID, err)
	}
	anyValue, err := c.Subnets(ctx, []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "*"}}})
	if err != nil || len(anyValue) != 3 {
		t.Errorf("wildcard value: %d subnets, %v", len(anyValue), err)
	}
	byName, err := c.Subnets(ctx, []apiv1.SelectorTerm{{Name: cluster + "-private-us-east-1b"}})
	if err != nil || len(byName) != 1 || byName[0].Zone != "us-east-1b" {
		t.Errorf("by Name tag: %+v, %v", byName, err)
	}
	if _, err := c.Subnets(ctx, []apiv1.SelectorTerm{{}}); err == nil {
		t.Error("empty selector term accepted")
	}

	sgs, err := c.SecurityGroups(ctx, exampleTerms)
	if err != nil || len(sgs) != 1 || sgs[0].Name != cluster+"-node" || !strings.HasPrefix(sgs[0].ID, "sg-") {
		t.Errorf("security groups: %+v, %v", sgs, err)
	}
	def, err := c.SecurityGroups(ctx, []apiv1.SelectorTerm{{Name: "default"}})
	if err != nil || len(def) != 1 || def[0].ID == sgs[0].ID {
		t.Errorf("default group by name: %+v, %v", def, err)
	}
	if got := srv.Calls()["DescribeSubnets"]; got != 5 {
		t.Errorf("DescribeSubnets calls = %d, want 5 (one per term)", got)
	}
}

func TestLaunchPicksCheapestOffering(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	ctx := context.Background()
	sn := subnets(t, c)

	// Passed out of price order: the lowest-price strategy still picks m5.large.
	in, err := c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.2xlarge", "m5.large", "m5.xlarge"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Type != "m5.large" || in.Zone != "us-east-1a" || in.CapacityType != "on-demand" || in.State != aws.StatePending {
		t.Errorf("launched %+v", in)
	}
	want := map[string]string{
		apiv1.TagNodeClaim: "general-purpose-abc12", apiv1.TagNodePool: "general-purpose",
		apiv1.TagCluster: cluster, apiv1.TagName: "general-purpose-abc12", "team": "platform",
	}
	s, ok := srv.Instance(in.ID)
	if !ok {
		t.Fatalf("server has no instance %s", in.ID)
	}
	for k, v := range want {
		if s.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, s.Tags[k], v)
		}
	}
	if s.LaunchTemplateName != "joinery-default" || s.LaunchTemplateVersion != "$Latest" {
		t.Errorf("launch template %q %q", s.LaunchTemplateName, s.LaunchTemplateVersion)
	}

	// Spot goes by the spot price, which orders these types differently
	// from on-demand in the catalog.
	cat := catalog.MustDefault()
	cands := []string{"c5.large", "c6i.large", "m5.large", "m6i.large", "r5.large"}
	bySpot := slices.Clone(cands)
	sort.SliceStable(bySpot, func(i, j int) bool {
		a, _ := cat.Get(bySpot[i])
		b, _ := cat.Get(bySpot[j])
		return a.SpotPrice() < b.SpotPrice()
	})
	in, err = c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeSpot, cands...))
	if err != nil {
		t.Fatal(err)
	}
	if in.Type != bySpot[0] || in.CapacityType != "spot" {
		t.Errorf("spot launched %s (%s), want %s", in.Type, in.CapacityType, bySpot[0])
	}
	got, err := c.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CapacityType != "spot" || got.Type != in.Type || got.Zone != in.Zone || got.LaunchTime.IsZero() ||
		!strings.HasSuffix(got.PrivateDNSName, ".ec2.internal") || got.Tags[apiv1.TagNodeClaim] != "general-purpose-abc12" {
		t.Errorf("Get = %+v", got)
	}
	if got.ProviderID() != "aws:///"+got.Zone+"/"+got.ID {
		t.Errorf("ProviderID %s", got.ProviderID())
	}
}

func TestLaunchFallsBackOnInsufficientCapacity(t *testing.T) {
	ice := aws.NewICECache(0, nil)
	srv, c := world(t, simec2.Options{}, aws.Options{ICECache: ice})
	ctx := context.Background()
	sn := subnets(t, c)
	types := []string{"m5.large", "m5.xlarge", "m5.2xlarge"}

	// The cheapest pool (m5.large in the first zone) has no capacity: the
	// same type in the next zone, and the failed pool is remembered.
	srv.SetInsufficientCapacity("m5.large", "us-east-1a", "on-demand", true)
	in, err := c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeOnDemand, types...))
	if err != nil {
		t.Fatal(err)
	}
	if in.Type != "m5.large" || in.Zone != "us-east-1b" {
		t.Errorf("launched %s in %s, want m5.large in us-east-1b", in.Type, in.Zone)
	}
	if !ice.Unavailable("m5.large", "us-east-1a", "on-demand") || ice.Len() != 1 {
		t.Errorf("ICE cache after partial failure: len %d", ice.Len())
	}

	// m5.large everywhere: the next type.
	srv.SetInsufficientCapacity("m5.large", "", "on-demand", true)
	in, err = c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeOnDemand, types...))
	if err != nil || in.Type != "m5.xlarge" || in.Zone != "us-east-1a" {
		t.Fatalf("launched %+v, %v; want m5.xlarge in us-east-1a", in, err)
	}

	// Nothing anywhere: an InsufficientCapacityError naming every offering.
	srv.SetInsufficientCapacity("", "", "spot", true)
	before := len(srv.Instances())
	_, err = c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeSpot, types...))
	var iceErr *aws.InsufficientCapacityError
	if !errors.As(err, &iceErr) || !aws.IsInsufficientCapacity(err) {
		t.Fatalf("err = %v, want *InsufficientCapacityError", err)
	}
	var wantOfferings []aws.OfferingKey
	for _, ty := range types {
		for _, z := range catalog.DefaultZones {
			wantOfferings = append(wantOfferings, aws.OfferingKey{InstanceType: ty, Zone: z, CapacityType: "spot"})
		}
	}
	// In the order tried: by each zone's spot price.
	got := slices.Clone(iceErr.Offerings)
	key := func(o aws.OfferingKey) string { return o.InstanceType + "/" + o.Zone }
	slices.SortFunc(got, func(a, b aws.OfferingKey) int { return strings.Compare(key(a), key(b)) })
	slices.SortFunc(wantOfferings, func(a, b aws.OfferingKey) int { return strings.Compare(key(a), key(b)) })
	if !slices.Equal(got, wantOfferings) {
		t.Errorf("offerings %v, want %v", iceErr.Offerings, wantOfferings)
	}
	for _, fe := range iceErr.Errors {
		if fe.Code != "InsufficientInstanceCapacity" {
			t.Errorf("fleet error %v", fe)
		}
	}
	for _, o := range wantOfferings {
		if !ice.Unavailable(o.InstanceType, o.Zone, o.CapacityType) {
			t.Errorf("%v not in ICE cache", o)
		}
	}
	// m5.large on demand in 3 zones, and the 9 spot offerings.
	if ice.Len() != 3+9 {
		t.Errorf("ICE cache len %d, want 12", ice.Len())
	}
	if len(srv.Instances()) != before {
		t.Error("an instance was launched despite ICE everywhere")
	}

	// A request EC2 refuses outright is wrapped with the API name, not a capacity error.
	srv.ClearInsufficientCapacity()
	_, err = c.Launch(ctx, launchReq([]aws.Subnet{{ID: "subnet-0000000000000000f", Zone: "us-east-1a"}}, apiv1.CapacityTypeOnDemand, "m5.large"))
	if err == nil || aws.IsInsufficientCapacity(err) || !strings.Contains(err.Error(), "CreateFleet") ||
		!strings.Contains(err.Error(), "InvalidSubnetID.NotFound") {
		t.Errorf("bad subnet: %v", err)
	}
	if _, err := c.Launch(ctx, launchReq(sn, "reserved", "m5.large")); err == nil {
		t.Error("capacity type reserved accepted")
	}
}

func TestThrottlingAbsorbedByRetries(t *testing.T) {
	srv, c := world(t, simec2.Options{ThrottleFraction: 0.5, Seed: 7}, aws.Options{MaxAttempts: 20})
	ctx := context.Background()
	sn := subnets(t, c)
	var ids []string
	for range 6 {
		in, err := c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeOnDemand, "c5.large", "m5.large"))
		if err != nil {
			t.Fatalf("launch under 50%% throttling: %v", err)
		}
		ids = append(ids, in.ID)
		if _, err := c.Get(ctx, in.ID); err != nil {
			t.Fatalf("get under throttling: %v", err)
		}
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 6 {
		t.Fatalf("list under throttling: %d, %v", len(list), err)
	}
	if err := c.Terminate(ctx, ids...); err != nil {
		t.Fatal(err)
	}
	throttled := 0
	for _, n := range srv.ThrottledCalls() {
		throttled += n
	}
	if throttled < 5 {
		t.Errorf("only %d calls were throttled; the test proves nothing", throttled)
	}
	// A throttled request is refused before it is handled, so retries launch nothing twice.
	if n := len(srv.Instances()); n != 6 {
		t.Errorf("%d instances on the server, want 6", n)
	}

	// Without retries the same throttling surfaces.
	_, one := world(t, simec2.Options{ThrottleFraction: 1}, aws.Options{MaxAttempts: 1})
	if _, err := one.List(ctx); err == nil || !strings.Contains(err.Error(), "RequestLimitExceeded") {
		t.Errorf("MaxAttempts 1 under full throttling: %v", err)
	}
}

func TestListGetTerminate(t *testing.T) {
	// Booting takes long enough that a loaded machine still lists them pending.
	srv, url := endpoint(t, simec2.Options{BootDelay: 3 * time.Second})
	// One call per launch: the instances are listed while still pending.
	c := client(t, url, aws.Options{LaunchBatchIdle: -1})
	other := client(t, url, aws.Options{ClusterName: "staging-eks", LaunchBatchIdle: -1})
	ctx := context.Background()
	sn := subnets(t, c)
	var mine []string
	for range 3 {
		in, err := c.Launch(ctx, launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium"))
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, in.ID)
	}
	theirs, err := other.Launch(ctx, launchReq(sn, apiv1.CapacityTypeSpot, "t3.medium"))
	if err != nil {
		t.Fatal(err)
	}

	ids := func(list []aws.Instance) []string {
		var out []string
		for _, in := range list {
			out = append(out, in.ID)
		}
		return out
	}
	list, err := c.List(ctx)
	if err != nil || !slices.Equal(ids(list), mine) {
		t.Fatalf("List = %v, %v; want %v", ids(list), err, mine)
	}
	for _, in := range list {
		if in.State != aws.StatePending || in.Tags[apiv1.TagCluster] != cluster {
			t.Errorf("listed %+v", in)
		}
	}
	if l, _ := other.List(ctx); !slices.Equal(ids(l), []string{theirs.ID}) {
		t.Errorf("other cluster lists %v", ids(l))
	}
	waitState := func(id, state string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			in, err := c.Get(ctx, id)
			if err == nil && in.State == state {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never became %s (last %+v, %v)", id, state, in, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitState(mine[0], aws.StateRunning)

	_, err = c.Get(ctx, "i-0123456789abcdef0")
	if !aws.IsNotFound(err) || !errors.Is(err, aws.ErrNotFound) {
		t.Errorf("Get unknown = %v", err)
	}

	// Terminate is idempotent: an unknown id in the batch does not stop the
	// others, and terminating again is fine.
	if err := c.Terminate(ctx, mine[0], "i-0123456789abcdef0", mine[1]); err != nil {
		t.Fatal(err)
	}
	for _, id := range mine[:2] {
		if in, _ := srv.Instance(id); in.State != simec2.StateShuttingDown && in.State != simec2.StateTerminated {
			t.Errorf("%s is %s after Terminate", id, in.State)
		}
	}
	if in, _ := srv.Instance(mine[2]); in.State == simec2.StateShuttingDown || in.State == simec2.StateTerminated {
		t.Errorf("%s was terminated too", mine[2])
	}
	if err := c.Terminate(ctx, mine[0], mine[1]); err != nil {
		t.Errorf("second Terminate: %v", err)
	}
	// Get reports a terminated instance as not found.
	deadline := time.Now().Add(15 * time.Second)
	for _, id := range mine[:2] {
		for {
			_, err := c.Get(ctx, id)
			if aws.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("terminated instance %s still found: %v", id, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if in, _ := srv.Instance(mine[0]); in.State != simec2.StateTerminated {
		t.Errorf("server state %s", in.State)
	}
	list, err = c.List(ctx)
	if err != nil || !slices.Equal(ids(list), mine[2:]) {
		t.Errorf("List after terminate = %v, %v", ids(list), err)
	}
	if err := c.Terminate(ctx, mine[0]); err != nil {
		t.Errorf("Terminate of a terminated instance: %v", err)
	}
	if err := c.Terminate(ctx, "bogus"); err == nil {
		t.Error("Terminate of a malformed id succeeded")
	}
	if err := c.Terminate(ctx); err != nil {
		t.Errorf("Terminate of nothing: %v", err)
	}
}

func TestOnRunningAfterBootDelay(t *testing.T) {
	const boot = 120 * time.Millisecond
	running := make(chan simec2.Instance, 1)
	srv, c := world(t, simec2.Options{BootDelay: boot, OnRunning: func(in simec2.Instance) { running <- in }}, aws.Options{})
	ctx := context.Background()
	start := time.Now()
	req := launchReq(subnets(t, c), apiv1.CapacityTypeOnDemand, "m6g.large")
	arm, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/recommended/image_id")
	req.ImageIDs = map[string]string{"m6g.large": arm}
	in, err := c.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-running:
		if got.ID != in.ID || got.State != simec2.StateRunning || got.Architecture != "arm64" || got.ImageID != arm {
			t.Errorf("OnRunning(%+v)", got)
		}
		if d := time.Since(start); d < boot {
			t.Errorf("OnRunning after %v, before BootDelay %v", d, boot)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("OnRunning never fired")
	}
	got, err := c.Get(ctx, in.ID)
	if err != nil || got.State != aws.StateRunning {
		t.Errorf("Get after OnRunning: %+v, %v", got, err)
	}
}

func TestInstanceTypeZones(t *testing.T) {
	_, c := world(t, simec2.Options{}, aws.Options{})
	zones, err := c.InstanceTypeZones(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(zones) != len(catalog.MustDefault().Types) || !slices.Equal(zones["m5.large"], catalog.DefaultZones) {
		t.Errorf("%d types; m5.large in %v", len(zones), zones["m5.large"])
	}
	// The local world's us-east-1c does not sell c7a (simec2.DefaultNotOffered).
	if !slices.Equal(zones["c7a.large"], []string{"us-east-1a", "us-east-1b"}) {
		t.Errorf("c7a.large in %v", zones["c7a.large"])
	}
}

// SpotPrices reads every page of DescribeSpotPriceHistory and keeps the
// newest point per (type, zone): a moved price is the one returned, a
// zone that does not sell a type has none, zones differ.
func TestSpotPrices(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	if err := srv.SetSpotPrice("m5.large", "us-east-1b", 0.0123); err != nil {
		t.Fatal(err)
	}
	prices, err := c.SpotPrices(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for _, zs := range prices {
		pairs += len(zs)
	}
	want := 0
	for _, it := range catalog.MustDefault().Types {
		for _, z := range catalog.DefaultZones {
			if srv.Offered(it.Name, z) {
				want++
			}
		}
	}
	if pairs != want {
		t.Errorf("%d (type, zone) prices, want the %d offered pairs", pairs, want)
	}
	m5 := prices["m5.large"]
	a, _ := srv.SpotPrice("m5.large", "us-east-1a")
	if len(m5) != 3 || m5["us-east-1b"] != 0.0123 || m5["us-east-1a"] != a || m5["us-east-1a"] == m5["us-east-1c"] {
		t.Errorf("m5.large spot prices %v (1a on the server %v)", m5, a)
	}
	if _, ok := prices["c7a.large"]["us-east-1c"]; ok || len(prices["c7a.large"]) != 2 {
		t.Errorf("c7a.large spot prices %v: us-east-1c does not sell it", prices["c7a.large"])
	}
}
