package aws_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// launchN launches n on-demand m5.large instances.
func launchN(t *testing.T, c *aws.Client, n int) []string {
	t.Helper()
	sn := subnets(t, c)
	ids := make([]string, n)
	for i := range ids {
		in, err := c.Launch(context.Background(), launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.large"))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = in.ID
	}
	return ids
}

// 300 concurrent Gets (and an unknown id among them) make two
// DescribeInstances calls, filtered by instance id, not 300.
func TestConcurrentGetsShareDescribes(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	ids := launchN(t, c, 3)
	srv.SetRecording(true)
	var wg sync.WaitGroup
	errs := make(chan error, 301)
	for i := range 300 {
		id := ids[i%3]
		wg.Go(func() {
			if in, err := c.Get(context.Background(), id); err != nil || in.ID != id {
				errs <- fmt.Errorf("Get %s: %+v %v", id, in, err)
			}
		})
	}
	wg.Go(func() {
		if _, err := c.Get(context.Background(), "i-0123456789abcdef0"); !aws.IsNotFound(err) {
			errs <- fmt.Errorf("unknown id: %v, want not found", err)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	calls := 0
	for _, r := range srv.Requests() {
		if r.Action == "DescribeInstances" {
			calls++
			if r.Params.Get("Filter.1.Name") != "instance-id" || r.Params.Get("InstanceId.1") != "" {
				t.Errorf("describe not by instance-id filter: %v", r.Params)
			}
		}
	}
	if calls == 0 || calls > 3 {
		t.Errorf("%d DescribeInstances calls for 301 concurrent Gets, want 1 to 3", calls)
	}
}

// A batch naming an instance EC2 does not know is not failed whole: the
// known instances are terminated in one more call, the unknown one counts
// as done.
func TestTerminateBatchWithAnUnknownInstance(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	ids := launchN(t, c, 4)
	srv.SetRecording(true)
	all := append([]string{"i-0123456789abcdef0"}, ids...)
	if err := c.Terminate(context.Background(), all...); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if in, _ := srv.Instance(id); in.State != simec2.StateShuttingDown && in.State != simec2.StateTerminated {
			t.Errorf("%s is %s after Terminate", id, in.State)
		}
	}
	var actions []string
	for _, r := range srv.Requests() {
		actions = append(actions, r.Action)
	}
	if want := []string{"TerminateInstances", "DescribeInstances", "TerminateInstances"}; fmt.Sprint(actions) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v (the batch, a describe to split it, the known ones)", actions, want)
	}
}

// GetAll answers a terminated instance with its state, an unknown one not
// at all: garbage collection takes the first as gone at once and waits out
// the consistency window for the second.
func TestGetAllShowsTerminatedInstances(t *testing.T) {
	srv, c := world(t, simec2.Options{TerminateDelay: time.Millisecond}, aws.Options{})
	ids := launchN(t, c, 2)
	if err := c.Terminate(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if in, _ := srv.Instance(ids[0]); in.State == simec2.StateTerminated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("instance never terminated")
		}
	}
	unknown := "i-0123456789abcdef0"
	got, err := c.GetAll(context.Background(), []string{ids[0], ids[1], unknown})
	if err != nil {
		t.Fatal(err)
	}
	if got[ids[0]].State != aws.StateTerminated || got[ids[1]].State != aws.StateRunning {
		t.Errorf("states %q %q, want terminated, running", got[ids[0]].State, got[ids[1]].State)
	}
	if _, ok := got[unknown]; ok || len(got) != 2 {
		t.Errorf("GetAll = %v, want the two known instances only", got)
	}
}

// A throttled batch is not split into one call per instance, is asked
// for again (backing off) while the caller waits, and a caller that stops
// waiting gets the throttle, which is never "not found".
func TestThrottledTerminateIsNotSplitNorGone(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{MaxAttempts: 1})
	ids := launchN(t, c, 5)
	srv.SetRecording(true)
	srv.SetThrottleFraction(1)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	err := c.Terminate(ctx, ids...)
	if !aws.IsThrottled(err) || aws.IsNotFound(err) {
		t.Fatalf("Terminate under full throttling: %v, want a throttle, not a not-found", err)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 || len(reqs) > 3 {
		t.Errorf("%d calls in 2.5 s, want the batch and its retries after 1 s and 2 s", len(reqs))
	}
	for _, r := range reqs {
		if r.Action != "TerminateInstances" || r.Params.Get("InstanceId.5") == "" {
			t.Errorf("%s with %v: want the whole batch each time", r.Action, r.Params)
		}
	}
	srv.SetThrottleFraction(0)
	if err := c.Terminate(context.Background(), ids...); err != nil {
		t.Fatalf("once the throttling stops: %v", err)
	}
	srv.SetThrottleFraction(1)
	_, err = c.Get(context.Background(), ids[0])
	if !aws.IsThrottled(err) || aws.IsNotFound(err) {
		t.Fatalf("Get under full throttling: %v, want a throttle, not a not-found", err)
	}
}

// Every throttled attempt is reported, retried ones included, with the
// service and operation.
func TestThrottledAttemptsReported(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv, c := world(t, simec2.Options{ThrottleFraction: 0.3, Seed: 3}, aws.Options{MaxAttempts: 30,
		Throttled: func(service, action string) {
			mu.Lock()
			seen[service+" "+action]++
			mu.Unlock()
		}})
	ids := launchN(t, c, 2)
	if err := c.Terminate(context.Background(), ids...); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for action, n := range srv.ThrottledCalls() {
		total += n
		if seen["EC2 "+action] != n {
			t.Errorf("%s: %d throttled attempts reported, the endpoint refused %d", action, seen["EC2 "+action], n)
		}
	}
	if total == 0 {
		t.Fatal("nothing was throttled; the test proves nothing")
	}
}

// A launch refused for its rate, every retry spent, is a throttle: not
// insufficient capacity, and no offering goes into the ICE cache.
func TestThrottledLaunchIsNotInsufficientCapacity(t *testing.T) {
	ice := aws.NewICECache(time.Minute, nil)
	srv, c := world(t, simec2.Options{}, aws.Options{MaxAttempts: 2, ICECache: ice})
	sn := subnets(t, c)
	srv.SetThrottleFraction(1)
	_, err := c.Launch(context.Background(), launchReq(sn, apiv1.CapacityTypeSpot, "m5.large", "c5.large"))
	if !aws.IsThrottled(err) || aws.IsInsufficientCapacity(err) || aws.IsNotFound(err) {
		t.Fatalf("throttled launch: %v, want a throttle only", err)
	}
	if ice.Len() != 0 {
		t.Errorf("a throttled launch marked %d offerings unavailable", ice.Len())
	}
}
