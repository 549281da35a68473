package ec2

import (
	"strings"

	"github.com/joinery/joinery/sim/internal/throttle"
)

// EC2's default token buckets, per account and Region ("Request
// throttling for the Amazon EC2 API"). Each API has its own request
// bucket, sized by the API's category; launches and terminations also
// take one token per instance from a resource bucket.
var (
	limitNonMutating = throttle.Limit{Burst: 100, Refill: 20}
	// limitUnfiltered is the smaller bucket of DescribeInstances and its
	// kin when called with neither a filter nor pagination.
	limitUnfiltered = throttle.Limit{Burst: 50, Refill: 10}
	limitMutating   = throttle.Limit{Burst: 50, Refill: 5}
	// Uncategorized APIs with buckets of their own.
	limitTerminateInstances = throttle.Limit{Burst: 100, Refill: 5}
	limitCreateTags         = throttle.Limit{Burst: 100, Refill: 10}
	// Resource buckets: instances launched (RunInstances: a burst of 1000
	// instances, then 2 a second) and terminated.
	resourceLaunches     = throttle.Limit{Burst: 1000, Refill: 2}
	resourceTerminations = throttle.Limit{Burst: 1000, Refill: 20}
)

// unfilteredAPIs are the non-mutating APIs whose calls without a filter or
// pagination take from the smaller bucket.
var unfilteredAPIs = map[string]bool{
	"DescribeInstances": true, "DescribeInstanceStatus": true, "DescribeNetworkInterfaces": true,
	"DescribeSecurityGroups": true, "DescribeSnapshots": true, "DescribeSpotInstanceRequests": true,
	"DescribeVolumes": true,
}

// requestBucket names the request bucket a call of action takes its token
// from, with that bucket's limit.
func requestBucket(action string, f form) (string, throttle.Limit) {
	switch action {
	case "TerminateInstances":
		return action, limitTerminateInstances
	case "CreateTags":
		return action, limitCreateTags
	}
	if !nonMutating(action) {
		return action, limitMutating
	}
	// EC2 does not say whether a list of ids counts as a filter; only
	// Filter and pagination are taken as one here (the stingier reading).
	if unfilteredAPIs[action] && len(f.indices("Filter")) == 0 && f.get("MaxResults") == "" && f.get("NextToken") == "" {
		return action + "/unfiltered", limitUnfiltered
	}
	return action, limitNonMutating
}

func nonMutating(action string) bool {
	for _, p := range []string{"Describe", "List", "Search", "Get"} {
		if strings.HasPrefix(action, p) {
			return true
		}
	}
	return false
}

// resourceBucket names the resource bucket a call of action drains and by
// how much: CreateFleet by the instances it asks for (EC2 does not say
// whether fleets share RunInstances' bucket; here they do),
// TerminateInstances by the instances it names. ok is false for calls
// that take from no resource bucket.
func resourceBucket(action string, f form) (name string, l throttle.Limit, n float64, ok bool) {
	switch action {
	case "CreateFleet":
		total, _, err := f.intParam("TargetCapacitySpecification.TotalTargetCapacity")
		if err != nil || total <= 0 {
			return "", l, 0, false // refused as invalid, not throttled
		}
		return "resource/RunInstances", resourceLaunches, float64(total), true
	case "TerminateInstances":
		return "resource/TerminateInstances", resourceTerminations, float64(len(f.indices("InstanceId"))), true
	}
	return "", l, 0, false
}

// withinLimits takes the call's tokens from its request bucket and, for
// launches and terminations, its resource bucket, and reports whether both
// had enough. A call refused by the resource bucket has still spent its
// request token (AWS does not say it gets it back). Unknown actions take
// nothing: they are refused as InvalidAction.
func (s *Server) withinLimits(action string, f form) bool {
	if s.buckets == nil {
		return true
	}
	if _, known := handlers[action]; !known {
		return true
	}
	name, l := requestBucket(action, f)
	if !s.buckets.Take(name, l, 1) {
		return false
	}
	if name, l, n, ok := resourceBucket(action, f); ok {
		return s.buckets.Take(name, l, n)
	}
	return true
}

// SetThrottleScale replaces the token buckets with full ones scaled by f
// (f <= 0: no buckets), as Options.ThrottleScale does at start.
func (s *Server) SetThrottleScale(f float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets = throttle.NewSet(f, nil)
}
