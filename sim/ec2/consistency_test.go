package ec2_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const window = 4 * time.Second

// consistentWorld is an endpoint with a read-after-write window on a fake clock.
func consistentWorld(t *testing.T) (*ec2.Server, *sdkec2.Client, *fakeClock, map[string]string) {
	t.Helper()
	clk := newFakeClock()
	srv, c := start(t, ec2.Options{Consistency: window, Now: clk.Now, BootDelay: -1})
	return srv, c, clk, subnetsByZone(t, c)
}

func launchOne(t *testing.T, c *sdkec2.Client, subnet string, tags map[string]string) string {
	t.Helper()
	out, err := c.CreateFleet(context.Background(), fleet("on-demand", 1, [][2]string{{"m5.large", subnet}}, tags))
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("CreateFleet: %+v %v", out, err)
	}
	return out.Instances[0].InstanceIds[0]
}

// A launched instance runs at once but the API does not know it until its
// window has passed: NotFound by id (describe, terminate, tag), absent
// from a filtered listing; then it is there.
func TestLaunchedInstanceIsInvisibleUntilItsWindowPasses(t *testing.T) {
	srv, c, clk, sub := consistentWorld(t)
	ctx := context.Background()
	id := launchOne(t, c, sub["us-east-1a"], map[string]string{"team": "a"})
	if in, ok := srv.Instance(id); !ok || in.State != ec2.StateRunning {
		t.Fatalf("the machine itself: %+v %v", in, ok)
	}
	byTag := &sdkec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("tag:team"), Values: []string{"a"}}}}
	check := func(visible bool) {
		t.Helper()
		_, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}})
		list, lerr := c.DescribeInstances(ctx, byTag)
		_, tagErr := c.CreateTags(ctx, &sdkec2.CreateTagsInput{Resources: []string{id}, Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
		if lerr != nil {
			t.Fatal(lerr)
		}
		listed := len(list.Reservations) == 1
		if visible != (err == nil) || visible != listed || visible != (tagErr == nil) {
			t.Fatalf("visible=%v: describe %v, listed %v, create tags %v", visible, err, listed, tagErr)
		}
		if !visible && (apiCode(err) != ec2.CodeInvalidInstanceIDNotFound || apiCode(tagErr) != ec2.CodeInvalidInstanceIDNotFound) {
			t.Fatalf("not yet visible: describe %v, create tags %v", err, tagErr)
		}
	}
	check(false)
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{id}}); apiCode(err) != ec2.CodeInvalidInstanceIDNotFound {
		t.Fatalf("TerminateInstances within the window: %v", err)
	}
	if in, _ := srv.Instance(id); in.State != ec2.StateRunning {
		t.Fatalf("a NotFound terminate stopped the instance: %s", in.State)
	}
	clk.Add(window / 2)
	for i := 0; i < 10; i++ { // the delay is in [window/2, window]
		clk.Add(window / 20)
	}
	check(true)
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatalf("TerminateInstances after the window: %v", err)
	}
}

// Each resource's delay lies in [window/2, window], differs by resource
// and repeats with the seed.
func TestVisibilityDelaysVaryAndRepeat(t *testing.T) {
	delays := func(seed uint64) []time.Duration {
		clk := newFakeClock()
		srv, c := start(t, ec2.Options{Consistency: window, Now: clk.Now, BootDelay: -1, Seed: seed})
		sub := subnetsByZone(t, c)
		var ids []string
		for i := 0; i < 8; i++ {
			ids = append(ids, launchOne(t, c, sub["us-east-1b"], nil))
		}
		out := make([]time.Duration, len(ids))
		for step := time.Duration(0); step <= window; step += 50 * time.Millisecond {
			for i, id := range ids {
				if out[i] > 0 {
					continue
				}
				if _, err := c.DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{InstanceIds: []string{id}}); err == nil {
					out[i] = step
				}
			}
			clk.Add(50 * time.Millisecond)
		}
		_ = srv
		return out
	}
	a, b, other := delays(7), delays(7), delays(8)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, other delays: %v vs %v", a, b)
	}
	if slices.Equal(a, other) {
		t.Fatalf("another seed, the same delays: %v", a)
	}
	distinct := map[time.Duration]bool{}
	for _, d := range a {
		if d < window/2 || d > window {
			t.Fatalf("delay %s outside [%s, %s]: %v", d, window/2, window, a)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("every instance shows after the same delay: %v", a)
	}
}

// A launch template created over the API is unknown to DescribeLaunchTemplates
// and CreateFleet until its window has passed; one created in process is not.
func TestNewLaunchTemplateIsInvisibleUntilItsWindowPasses(t *testing.T) {
	srv, c, clk, sub := consistentWorld(t)
	ctx := context.Background()
	createLT(t, c, "fresh", &types.RequestLaunchTemplateData{ImageId: aws.String(recommended(t, srv, "x86_64", "standard"))}, nil)
	if _, err := c.DescribeLaunchTemplates(ctx, &sdkec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"fresh"}}); apiCode(err) != ec2.CodeInvalidLaunchTemplateNameNotFound {
		t.Fatalf("DescribeLaunchTemplates within the window: %v", err)
	}
	in := fleet("on-demand", 1, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)
	in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.LaunchTemplateName = aws.String("fresh")
	if _, err := c.CreateFleet(ctx, in); apiCode(err) != ec2.CodeInvalidLaunchTemplateNameNotFound {
		t.Fatalf("CreateFleet within the window: %v", err)
	}
	if _, err := c.CreateLaunchTemplate(ctx, &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("fresh"),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String("ami-0123")}}); apiCode(err) != ec2.CodeInvalidLaunchTemplateNameAlreadyExists {
		t.Fatalf("the name is taken at once: %v", err)
	}
	clk.Add(window)
	if out, err := c.CreateFleet(ctx, in); err != nil || len(out.Instances) != 1 {
		t.Fatalf("CreateFleet after the window: %+v %v", out, err)
	}
	if _, err := c.CreateFleet(ctx, fleet("on-demand", 1, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)); err != nil {
		t.Fatalf("a template made in process: %v", err)
	}
}

// A tag CreateTags writes does not match a tag filter (the old value does)
// until its window has passed; the instance's tags show it at once.
func TestWrittenTagMatchesFiltersAfterItsWindow(t *testing.T) {
	_, c, clk, sub := consistentWorld(t)
	ctx := context.Background()
	id := launchOne(t, c, sub["us-east-1c"], map[string]string{"stage": "old"})
	clk.Add(window)
	if _, err := c.CreateTags(ctx, &sdkec2.CreateTagsInput{Resources: []string{id}, Tags: []types.Tag{{Key: aws.String("stage"), Value: aws.String("new")}}}); err != nil {
		t.Fatal(err)
	}
	matches := func(v string) bool {
		out, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("tag:stage"), Values: []string{v}}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Reservations) == 1
	}
	if matches("new") || !matches("old") {
		t.Fatalf("within the window: new matches %v, old %v", matches("new"), matches("old"))
	}
	clk.Add(window)
	if !matches("new") || matches("old") {
		t.Fatalf("after the window: new matches %v, old %v", matches("new"), matches("old"))
	}
}

// CreateFleet's client token: the same request again answers the first
// answer (the same instances, or the same errors when nothing launched),
// even within the window and after a restart; other parameters with the
// token are IdempotentParameterMismatch.
func TestClientTokenReplaysTheFirstAnswer(t *testing.T) {
	srv, c, _, sub := consistentWorld(t)
	ctx := context.Background()
	req := fleet("on-demand", 1, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil)
	req.ClientToken = aws.String("launch-1")
	first, err := c.CreateFleet(ctx, req)
	if err != nil || len(first.Instances) != 1 {
		t.Fatalf("%+v %v", first, err)
	}
	again, err := c.CreateFleet(ctx, req)
	if err != nil || aws.ToString(again.FleetId) != aws.ToString(first.FleetId) ||
		!slices.Equal(again.Instances[0].InstanceIds, first.Instances[0].InstanceIds) {
		t.Fatalf("replay: %+v %v", again, err)
	}
	other := fleet("on-demand", 1, [][2]string{{"m5.xlarge", sub["us-east-1a"]}}, nil)
	other.ClientToken = req.ClientToken
	if _, err := c.CreateFleet(ctx, other); apiCode(err) != ec2.CodeIdempotentParameterMismatch {
		t.Fatalf("other parameters, same token: %v", err)
	}

	srv.SetInsufficientCapacity("m5.2xlarge", "", "", true)
	failed := fleet("on-demand", 1, [][2]string{{"m5.2xlarge", sub["us-east-1a"]}}, nil)
	failed.ClientToken = aws.String("launch-2")
	if out, err := c.CreateFleet(ctx, failed); err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 {
		t.Fatalf("no capacity: %+v %v", out, err)
	}
	srv.SetInsufficientCapacity("m5.2xlarge", "", "", false)
	if out, err := c.CreateFleet(ctx, failed); err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 {
		t.Fatalf("a failed fleet's token is spent: %+v %v", out, err)
	}

	state := filepath.Join(t.TempDir(), "ec2.json")
	if err := srv.SaveState(state); err != nil {
		t.Fatal(err)
	}
	resumed := ec2.New(ec2.Options{})
	if err := resumed.LoadState(state); err != nil {
		t.Fatal(err)
	}
	url, stop, err := resumed.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	c2 := sdkec2.New(sdkec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: c.Options().Credentials, HTTPClient: c.Options().HTTPClient})
	after, err := c2.CreateFleet(ctx, req)
	if err != nil || !slices.Equal(after.Instances[0].InstanceIds, first.Instances[0].InstanceIds) || len(resumed.Instances()) != 1 {
		t.Fatalf("replay after a restart: %+v %v (%d instances)", after, err, len(resumed.Instances()))
	}
}

// EC2 keeps 50 tags per resource ("aws:" tags aside), keys up to 128
// characters and values up to 256: CreateTags past them is refused, and
// so is a launch asking for more.
func TestTagLimits(t *testing.T) {
	_, c, clk, sub := consistentWorld(t)
	ctx := context.Background()
	tags := map[string]string{}
	for i := range 49 {
		tags[fmt.Sprintf("k%02d", i)] = "v"
	}
	id := launchOne(t, c, sub["us-east-1c"], tags)
	clk.Add(window)
	tag := func(k, v string) error {
		_, err := c.CreateTags(ctx, &sdkec2.CreateTagsInput{Resources: []string{id}, Tags: []types.Tag{{Key: aws.String(k), Value: aws.String(v)}}})
		return err
	}
	if err := tag("k00", "again"); err != nil {
		t.Fatalf("rewriting a tag at 49: %v", err)
	}
	if err := tag("fiftieth", "v"); err != nil {
		t.Fatalf("the 50th tag: %v", err)
	}
	if err := tag("fifty-first", "v"); apiCode(err) != ec2.CodeTagLimitExceeded {
		t.Fatalf("the 51st tag: %v, want %s", err, ec2.CodeTagLimitExceeded)
	}
	if err := tag(strings.Repeat("k", 129), "v"); apiCode(err) != ec2.CodeInvalidParameterValue {
		t.Fatalf("a 129-character key: %v", err)
	}
	if err := tag("k01", strings.Repeat("v", 257)); apiCode(err) != ec2.CodeInvalidParameterValue {
		t.Fatalf("a 257-character value: %v", err)
	}
	tags["fiftieth"], tags["fifty-first"] = "v", "v"
	in := fleet("on-demand", 1, [][2]string{{"m5.large", sub["us-east-1a"]}}, tags)
	if _, err := c.CreateFleet(ctx, in); apiCode(err) != ec2.CodeTagLimitExceeded {
		t.Fatalf("a launch with 51 tags: %v, want %s", err, ec2.CodeTagLimitExceeded)
	}
}
