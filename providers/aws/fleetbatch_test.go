package aws_test

import (
	clocktesting "k8s.io/utils/clock/testing"

	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// concurrentLaunches launches one instance per request at once and
// returns each NodeClaim's instance or error.
func concurrentLaunches(c *aws.Client, reqs []aws.LaunchRequest) (map[string]aws.Instance, map[string]error) {
	var mu sync.Mutex
	got, errs := map[string]aws.Instance{}, map[string]error{}
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(func() {
			in, err := c.Launch(context.Background(), r)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[r.NodeClaim] = err
				return
			}
			got[r.NodeClaim] = in
		})
	}
	wg.Wait()
	return got, errs
}

// fleetCalls are the CreateFleet calls EC2 served, by target capacity.
func fleetCalls(srv *simec2.Server) []int {
	var out []int
	for _, r := range srv.Requests() {
		if r.Action == "CreateFleet" && !r.Throttled {
			n, _ := strconv.Atoi(r.Params.Get("TargetCapacitySpecification.TotalTargetCapacity"))
			out = append(out, n)
		}
	}
	return out
}

// 40 NodeClaims launched at once with the same request go to EC2 as a few
// CreateFleet calls whose capacities add up to 40; each NodeClaim gets an
// instance of its own, tagged with its name; requests that differ (another
// instance type) are never mixed into one call.
func TestConcurrentIdenticalLaunchesShareOneCreateFleet(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	sn := subnets(t, c)
	srv.SetRecording(true)
	var reqs []aws.LaunchRequest
	for i := range 40 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
		r.NodeClaim = fmt.Sprintf("general-purpose-%02d", i)
		reqs = append(reqs, r)
	}
	for i := range 5 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.large")
		r.NodeClaim = fmt.Sprintf("other-%d", i)
		reqs = append(reqs, r)
	}
	got, errs := concurrentLaunches(c, reqs)
	if len(errs) > 0 {
		t.Fatalf("launch errors: %v", errs)
	}
	calls, total := fleetCalls(srv), 0
	for _, n := range calls {
		total += n
	}
	if total != 45 || len(calls) > 8 {
		t.Errorf("CreateFleet calls with capacities %v for 45 launches, want a few adding up to 45", calls)
	}
	byID := map[string]simec2.Instance{}
	for _, in := range srv.Instances() {
		byID[in.ID] = in
	}
	seen := map[string]string{}
	for name, in := range got {
		if prev, dup := seen[in.ID]; dup {
			t.Errorf("instance %s given to %s and %s", in.ID, prev, name)
		}
		seen[in.ID] = name
		ec2in := byID[in.ID]
		if ec2in.Tags[apiv1.TagNodeClaim] != name || ec2in.Tags[apiv1.TagName] != name || in.Tags[apiv1.TagNodeClaim] != name {
			t.Errorf("%s: instance %s tagged %v in EC2, %v in the answer; want its NodeClaim", name, in.ID, ec2in.Tags, in.Tags)
		}
		want := "t3.medium"
		if name[:5] == "other" {
			want = "m5.large"
		}
		if ec2in.InstanceType != want || ec2in.Tags[apiv1.TagCluster] != cluster || ec2in.Tags[apiv1.TagNodePool] != "general-purpose" {
			t.Errorf("%s: %s %v, want a %s of the NodePool", name, ec2in.InstanceType, ec2in.Tags, want)
		}
	}
	if len(got) != 45 || len(byID) != 45 {
		t.Errorf("%d launched, %d instances in EC2, want 45 each", len(got), len(byID))
	}
}

// When EC2 has no capacity for a batch's offerings, every NodeClaim of
// the batch gets the insufficient-capacity error, as a lone launch would.
func TestBatchedLaunchWithoutCapacityFailsEachCaller(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	sn := subnets(t, c)
	for _, s := range sn {
		srv.SetInsufficientCapacity("t3.medium", s.Zone, apiv1.CapacityTypeOnDemand, true)
	}
	var reqs []aws.LaunchRequest
	for i := range 6 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
		r.NodeClaim = fmt.Sprintf("general-purpose-%d", i)
		reqs = append(reqs, r)
	}
	got, errs := concurrentLaunches(c, reqs)
	if len(got) != 0 || len(errs) != 6 {
		t.Fatalf("launched %v, errors %v; want 6 errors", got, errs)
	}
	for name, err := range errs {
		if !aws.IsInsufficientCapacity(err) {
			t.Errorf("%s: %v, want insufficient capacity", name, err)
		}
	}
	if n := len(srv.Instances()); n != 0 {
		t.Errorf("%d instances in EC2, want none", n)
	}
}

// A Solo launch (a retry) never shares its CreateFleet, and it keeps its
// own client token.
func TestSoloLaunchesAreNotBatched(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	sn := subnets(t, c)
	srv.SetRecording(true)
	var reqs []aws.LaunchRequest
	for i := range 3 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
		r.NodeClaim, r.ClientToken, r.Solo = fmt.Sprintf("general-purpose-%d", i), fmt.Sprintf("token-%d", i), true
		reqs = append(reqs, r)
	}
	if _, errs := concurrentLaunches(c, reqs); len(errs) > 0 {
		t.Fatal(errs)
	}
	tokens := map[string]bool{}
	for _, r := range srv.Requests() {
		if r.Action == "CreateFleet" && !r.Throttled {
			tokens[r.Params.Get("ClientToken")] = true
			if n := r.Params.Get("TargetCapacitySpecification.TotalTargetCapacity"); n != "1" {
				t.Errorf("a Solo launch in a CreateFleet of capacity %s", n)
			}
		}
	}
	if len(tokens) != 3 || !tokens["token-0"] || !tokens["token-2"] {
		t.Errorf("client tokens %v, want each launch's own", tokens)
	}
}

// A batch whose NodeClaim tags were never written (CreateTags refused, as
// for a worker killed right after CreateFleet) still says which instance
// is whose: each NodeClaim's member tag and the batch's pairing find the
// instance its launch answered with, once EC2's consistency window has
// passed since the batch launched. The process that launched the batch
// knows at once (a caller that gave up meanwhile retries); a new one
// (the worker restarted) learns from EC2.
func TestALostBatchIsFoundByItsMemberTags(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC))
	srv, url := endpoint(t, simec2.Options{Consistency: window, Now: clk.Now})
	launcher := client(t, url, aws.Options{Clock: clk, ConsistencyWindow: 2 * window})
	c := client(t, url, aws.Options{Clock: clk, ConsistencyWindow: 2 * window})
	sn := subnets(t, c)
	srv.Refuse("CreateTags", "InternalError")
	var reqs []aws.LaunchRequest
	for i := range 5 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
		r.NodeClaim = fmt.Sprintf("general-purpose-%d", 4-i)
		reqs = append(reqs, r)
	}
	got, errs := concurrentLaunches(launcher, reqs)
	if len(errs) > 0 || len(got) != 5 {
		t.Fatalf("launched %v, errors %v", got, errs)
	}
	srv.Refuse("CreateTags", "")
	for name, in := range got {
		b, err := launcher.FromBatch(context.Background(), name)
		if err != nil || b.Settling > 0 || len(b.Mine) != 1 || b.Mine[0].ID != in.ID {
			t.Errorf("%s, in the launching process: found %+v (%v), its launch answered %s", name, b, err, in.ID)
		}
	}
	for _, in := range srv.Instances() {
		if in.Tags[apiv1.TagNodeClaim] != "" || len(in.Tags) != 4+5 {
			t.Fatalf("instance %s tags %v: want no NodeClaim tag, the 3 shared tags, the fleet id and 5 member tags", in.ID, in.Tags)
		}
	}
	// EC2 shows each instance 2.5-5 s after the launch: while it shows
	// part of the batch, the pairing waits out the window; once it shows
	// the whole batch (5 s, the window is 10), at once.
	partial := 0
	for clk.Since(srv.Instances()[0].LaunchTime) <= window {
		seen, err := c.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.FromBatch(context.Background(), "general-purpose-3")
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) > 0 && len(seen) < 5 {
			partial++
			if b.Settling <= 0 {
				t.Fatalf("EC2 shows %d of the batch's 5 instances: %+v, want it settling", len(seen), b)
			}
		}
		clk.Step(250 * time.Millisecond)
	}
	if partial == 0 {
		t.Fatal("EC2 never showed part of the batch: the test proves nothing")
	}
	for name, in := range got {
		b, err := c.FromBatch(context.Background(), name)
		if err != nil || b.Settling > 0 || len(b.Mine) != 1 || b.Mine[0].ID != in.ID {
			t.Errorf("%s: found %+v (%v), its launch answered %s", name, b, err, in.ID)
		}
	}
	if b, err := c.FromBatch(context.Background(), "general-purpose-9"); err != nil || len(b.Mine) != 0 {
		t.Errorf("a NodeClaim of no batch: %+v %v", b, err)
	}
}

// Each member tag counts against EC2's 50 tags per instance: requests with
// 40 tags of their own share CreateFleets of at most 6 NodeClaims (50 - 42
// shared - their NodeClaim and Name tags), and with 46 each launches alone.
func TestBatchesFitEC2sTagLimit(t *testing.T) {
	for _, tc := range []struct{ own, maxCapacity int }{{40, 6}, {46, 1}} {
		srv, c := world(t, simec2.Options{}, aws.Options{})
		sn := subnets(t, c)
		srv.SetRecording(true)
		var reqs []aws.LaunchRequest
		for i := range 14 {
			r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
			r.NodeClaim, r.Tags = fmt.Sprintf("general-purpose-%d", i), map[string]string{}
			for k := range tc.own {
				r.Tags[fmt.Sprintf("cost-centre-%d", k)] = "platform"
			}
			reqs = append(reqs, r)
		}
		got, errs := concurrentLaunches(c, reqs)
		if len(errs) > 0 || len(got) != 14 {
			t.Fatalf("%d own tags: launched %d, errors %v", tc.own, len(got), errs)
		}
		for _, n := range fleetCalls(srv) {
			if n > tc.maxCapacity {
				t.Errorf("%d own tags: a CreateFleet of capacity %d, want at most %d", tc.own, n, tc.maxCapacity)
			}
		}
		for _, in := range srv.Instances() {
			if in.Tags[apiv1.TagNodeClaim] == "" {
				t.Errorf("%d own tags: instance %s without its NodeClaim tag", tc.own, in.ID)
			}
		}
	}
}

// A caller that gives up while its batch runs (its attempt timed out) and
// retries the same request under the same client token gets the instance
// the batch launched for it, at once and without another CreateFleet, as
// EC2 answers a repeated client token; another token launches anew.
func TestARetryGetsTheInstanceItsBatchLaunched(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	sn := subnets(t, c)
	srv.SetRecording(true)
	var reqs []aws.LaunchRequest
	for i := range 3 {
		r := launchReq(sn, apiv1.CapacityTypeOnDemand, "t3.medium")
		r.NodeClaim, r.ClientToken = fmt.Sprintf("general-purpose-%d", i), fmt.Sprintf("token-%d", i)
		reqs = append(reqs, r)
	}
	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Launch(gaveUp, reqs[0]); err == nil {
		t.Fatal("a caller whose context ended got an answer")
	}
	got, errs := concurrentLaunches(c, reqs[1:])
	if len(errs) > 0 || len(got) != 2 {
		t.Fatalf("launched %v, errors %v", got, errs)
	}
	var first aws.Instance
	for range 50 { // the batch runs on its own context: wait for its answer
		in, err := c.FromBatch(context.Background(), reqs[0].NodeClaim)
		if err == nil && len(in.Mine) == 1 {
			first = in.Mine[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	again, err := c.Launch(context.Background(), reqs[0])
	if err != nil || first.ID == "" || again.ID != first.ID {
		t.Fatalf("retry launched %s (%v), the batch launched %q for it", again.ID, err, first.ID)
	}
	if calls := fleetCalls(srv); len(calls) != 1 || calls[0] != 3 {
		t.Errorf("CreateFleet calls with capacities %v, want one of 3", calls)
	}
	other := reqs[0]
	other.ClientToken = "token-new"
	if in, err := c.Launch(context.Background(), other); err != nil || in.ID == first.ID {
		t.Errorf("a new client token got %s (%v), want a new instance", in.ID, err)
	}
}
