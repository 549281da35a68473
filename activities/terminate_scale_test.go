package activities

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube/kubetest"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// scaleNodes and scaleBuckets: a thousand nodes terminating at once, with
// EC2's buckets at 0.8 of AWS's, so the termination resource bucket (800
// instances, 16 a second) cannot take them in one go and Joinery meets
// RequestLimitExceeded.
const (
	scaleNodes   = 1000
	scaleBuckets = 0.8
)

// A thousand TerminateInstance activities at once against the local EC2
// over HTTP, its token buckets on: every instance terminated, no instance
// left running, throttles seen (and counted), and the worker's call rate
// per API within its bucket's refill once the burst is spent. The
// activities stop at the instance (InstanceOnly): the NodeClaims' deletion
// is Kubernetes' part, and the fake clientset's watch cannot take a
// thousand deletions at once.
func TestThousandNodesTerminatingUnderTheBuckets(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand terminations under throttling take half a minute")
	}
	srv, url := scaleEndpoint(t)
	m := metrics.New()
	cc, err := aws.New(context.Background(), aws.Options{Endpoint: url, ClusterName: "scale-test", Throttled: m.CloudThrottled})
	if err != nil {
		t.Fatal(err)
	}
	ids := launchScaleFleet(t, cc)
	a := newFake(t, kubetest.World{}, func(d *Deps) { d.Cloud, d.Metrics = cc, m })

	srv.SetThrottleScale(scaleBuckets)
	srv.SetRecording(true)
	start := time.Now()
	retries := terminateAll(t, a, ids)
	took := time.Since(start)

	assertNoneLeft(t, srv, cc, ids)
	throttled := 0.0
	for _, api := range []string{"TerminateInstances", "DescribeInstances"} {
		throttled += testutil.ToFloat64(m.CloudThrottledRequests.WithLabelValues("EC2", api))
	}
	if throttled == 0 {
		t.Error("joinery_cloud_throttled_requests_total stayed 0: the buckets never pushed back, the test proves nothing")
	}
	rates := callRates(srv.Requests())
	t.Logf("%d nodes terminated in %s (%d activity retries, %.0f throttled attempts); EC2 calls: %s",
		len(ids), took.Round(100*time.Millisecond), retries, throttled, rates)
	rates.assertWithinRefill(t)
}

// scaleEndpoint is the local EC2, buckets off while the fleet launches.
func scaleEndpoint(t *testing.T) (*simec2.Server, string) {
	t.Helper()
	srv := simec2.New(simec2.Options{ClusterTag: "production-eks", BootDelay: -1, TerminateDelay: time.Second})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	if _, err := srv.CreateLaunchTemplate("scale-test", simec2.LaunchTemplateData{ImageID: img}, nil); err != nil {
		t.Fatal(err)
	}
	return srv, url
}

// launchScaleFleet launches scaleNodes on-demand instances, eight calls
// at a time.
func launchScaleFleet(t *testing.T, cc *aws.Client) []string {
	t.Helper()
	sn, err := cc.Subnets(context.Background(), []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, scaleNodes)
	var wg sync.WaitGroup
	var failed atomic.Value
	sem := make(chan struct{}, 8)
	for i := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			in, err := cc.Launch(context.Background(), aws.LaunchRequest{NodeClaim: fmt.Sprintf("general-purpose-%04d", i), NodePool: "general-purpose",
				CapacityType: apiv1.CapacityTypeOnDemand, InstanceTypes: []string{"m5.large", "c5.large"}, Subnets: sn, LaunchTemplateName: "scale-test"})
			if err != nil {
				failed.Store(err)
				return
			}
			ids[i] = in.ID
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("launching the fleet: %v", err)
	}
	return ids
}

// terminateAll runs every NodeClaim's TerminateInstance at once, each
// retried as Temporal retries it (from 1 s, doubling, up to a minute),
// and returns how many retries there were.
func terminateAll(t *testing.T, a *Activities, ids []string) int64 {
	t.Helper()
	var retries atomic.Int64
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
			req := workflows.TerminateRequest{NodeClaim: fmt.Sprintf("general-purpose-%04d", i), InstanceID: ids[i], InstanceOnly: true, Reason: "scale test"}
			for wait := time.Second; ; wait = min(2*wait, time.Minute) {
				env := s.NewTestActivityEnvironment()
				env.RegisterActivityWithOptions(a.Lifecycle.TerminateInstance, activity.RegisterOptions{Name: workflows.ActivityTerminateInstance})
				if _, err := env.ExecuteActivity(workflows.ActivityTerminateInstance, req); err == nil {
					return
				} else if !aws.IsThrottled(err) && !strings.Contains(err.Error(), "RequestLimitExceeded") {
					t.Errorf("%s: %v", ids[i], err)
					return
				}
				retries.Add(1)
				time.Sleep(wait)
			}
		})
	}
	wg.Wait()
	return retries.Load()
}

func assertNoneLeft(t *testing.T, srv *simec2.Server, cc *aws.Client, ids []string) {
	t.Helper()
	for _, id := range ids {
		if in, ok := srv.Instance(id); !ok || in.State != simec2.StateTerminated {
			t.Errorf("%s: %s after its TerminateInstance returned", id, in.State)
		}
	}
	srv.SetThrottleScale(0)
	if live, err := cc.List(context.Background()); err != nil || len(live) != 0 {
		t.Errorf("leaked: %d live instances tagged for the cluster (%v)", len(live), err)
	}
}

// apiRate is one API's calls over the run.
type apiRate struct {
	api              string
	calls, throttled int
	seconds          float64
	burst, refill    float64
}

type rates []apiRate

func (rs rates) String() string {
	var b strings.Builder
	total, secs := 0, 0.0
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %d (%d throttled, %.1f/s over %.1fs); ", r.api, r.calls, r.throttled, float64(r.calls)/r.seconds, r.seconds)
		total += r.calls
		secs = math.Max(secs, r.seconds)
	}
	fmt.Fprintf(&b, "all %d, %.1f/s", total, float64(total)/secs)
	return b.String()
}

// bucketOf is the scaled request bucket of each API the test makes.
var bucketOf = map[string][2]float64{
	"TerminateInstances": {100 * scaleBuckets, 5 * scaleBuckets},
	"DescribeInstances":  {100 * scaleBuckets, 20 * scaleBuckets},
}

// callRates counts each API's requests, throttled ones included, over the
// run (first request to last).
func callRates(reqs []simec2.Request) rates {
	byAPI := map[string]*apiRate{}
	var first, last time.Time
	for _, r := range reqs {
		if first.IsZero() {
			first = r.Time
		}
		last = r.Time
		ar, ok := byAPI[r.Action]
		if !ok {
			b := bucketOf[r.Action]
			ar = &apiRate{api: r.Action, burst: b[0], refill: b[1]}
			byAPI[r.Action] = ar
		}
		ar.calls++
		if r.Throttled {
			ar.throttled++
		}
	}
	var out rates
	for _, ar := range byAPI {
		ar.seconds = math.Max(last.Sub(first).Seconds(), 1)
		out = append(out, *ar)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].api < out[j].api })
	return out
}

// assertWithinRefill: past its bucket's burst, an API was called no
// faster than the bucket refills (throttled attempts count: a client that
// backs off does not keep knocking), with a quarter to spare for the
// attempts that find the bucket empty.
func (rs rates) assertWithinRefill(t *testing.T) {
	t.Helper()
	for _, r := range rs {
		if r.refill == 0 {
			t.Errorf("%s: an API the test did not expect the worker to call", r.api)
			continue
		}
		if allowed := r.burst + 1.25*r.refill*r.seconds; float64(r.calls) > allowed {
			t.Errorf("%s: %d calls in %.1fs, more than the burst %.0f + refill %.0f/s allows (%.0f)",
				r.api, r.calls, r.seconds, r.burst, r.refill, allowed)
		}
	}
}
