package ec2_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/ec2"
)

// scale50th makes every bucket a 50th of EC2's: DescribeInstances
// unfiltered 1 (filtered 2), mutating calls 1, TerminateInstances 2 calls
// and 20 instances, launches 20 instances.
const scale50th = 0.02

func throttled(err error) bool {
	return apiCode(err) == ec2.CodeRequestLimitExceeded && httpStatus(err) == 503
}

// Each API has its own bucket, and DescribeInstances without a filter or
// pagination takes from the smaller one: emptying it leaves filtered calls
// and other APIs served.
func TestThrottleBucketPerAPIAndUnfilteredDescribes(t *testing.T) {
	srv, c := start(t, ec2.Options{ThrottleScale: scale50th})
	ctx := context.Background()
	if _, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{}); err != nil {
		t.Fatalf("first unfiltered DescribeInstances: %v", err)
	}
	if _, err := c.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{}); !throttled(err) {
		t.Fatalf("second unfiltered DescribeInstances within the second: %v, want RequestLimitExceeded (503)", err)
	}
	filtered := &sdkec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"running"}}}}
	for i := range 2 {
		if _, err := c.DescribeInstances(ctx, filtered); err != nil {
			t.Fatalf("filtered DescribeInstances %d (its own, larger bucket): %v", i+1, err)
		}
	}
	if _, err := c.DescribeInstances(ctx, filtered); !throttled(err) {
		t.Fatalf("third filtered DescribeInstances: %v, want RequestLimitExceeded", err)
	}
	if _, err := c.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{}); err != nil {
		t.Fatalf("DescribeSubnets after DescribeInstances was throttled: %v", err)
	}
	if got := srv.ThrottledCalls()["DescribeInstances"]; got != 2 {
		t.Errorf("ThrottledCalls[DescribeInstances] = %d, want 2", got)
	}
}

// TerminateInstances drains its resource bucket by the instances it names:
// a call naming more than the bucket holds is refused whole, before EC2
// looks at the ids.
func TestThrottleTerminationsByInstanceCount(t *testing.T) {
	_, c := start(t, ec2.Options{ThrottleScale: scale50th})
	ctx := context.Background()
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("i-0%016x", i+1)
		}
		return out
	}
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids(21)}); !throttled(err) {
		t.Fatalf("terminating 21 instances with 20 tokens: %v, want RequestLimitExceeded", err)
	}
	_, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids(20)})
	if apiCode(err) != ec2.CodeInvalidInstanceIDNotFound {
		t.Fatalf("terminating 20 unknown instances with 20 tokens: %v, want past the buckets (InvalidInstanceID.NotFound)", err)
	}
}

// CreateFleet drains the launch resource bucket by the capacity it asks for.
func TestThrottleLaunchesByTargetCapacity(t *testing.T) {
	_, c := start(t, ec2.Options{ThrottleScale: scale50th})
	_, err := c.CreateFleet(context.Background(), fleet("on-demand", 21, [][2]string{{"m5.large", subnetsByZone(t, c)["us-east-1a"]}}, nil))
	if !throttled(err) {
		t.Fatalf("a fleet of 21 with 20 launch tokens: %v, want RequestLimitExceeded", err)
	}
}

// EC2 takes at most 200 filter values per call, all filters together.
func TestFilterLimitExceeded(t *testing.T) {
	_, c := start(t, ec2.Options{})
	in := func(n int) *sdkec2.DescribeInstancesInput {
		vals := make([]string, n-1)
		for i := range vals {
			vals[i] = fmt.Sprintf("i-0%016x", i+1)
		}
		return &sdkec2.DescribeInstancesInput{Filters: []types.Filter{
			{Name: aws.String("instance-id"), Values: vals},
			{Name: aws.String("instance-state-name"), Values: []string{"running"}},
		}}
	}
	if _, err := c.DescribeInstances(context.Background(), in(200)); err != nil {
		t.Fatalf("200 filter values: %v", err)
	}
	_, err := c.DescribeInstances(context.Background(), in(201))
	if apiCode(err) != ec2.CodeFilterLimitExceeded || httpStatus(err) != 400 {
		t.Fatalf("201 filter values: %v, want FilterLimitExceeded (400)", err)
	}
}
