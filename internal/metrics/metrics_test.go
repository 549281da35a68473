package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// recordOneOfEach calls every recording method once: the nil-receiver test
// and the per-collector test go through the same list, so a method added
// to one is checked by both.
func recordOneOfEach(m *Metrics) {
	m.ObserveCloud("CreateFleet", "", 0.1)
	m.CloudThrottled("EC2", "DescribeInstances")
	m.SetPodsPending(3)
	m.PodUnschedulable()
	m.NodeClaimCreatedBy("general-purpose", "provisioned", false)
	m.NodeClaimLaunched("general-purpose", "m7i.large", "spot", "us-east-1a")
	m.NodeClaimRegistered("general-purpose", "m7i.large", "spot", "us-east-1a")
	m.NodeClaimEnded("general-purpose", "drifted", "spot", "us-east-1a", true)
	m.ObserveProvision(1.5)
	m.SetInvalidNodePools(1)
	m.OfferingInsufficient("m7i.large", "us-east-1a", "spot")
	m.SetDisruptionEligible(4)
	m.DisruptionDecision("empty", "proposed")
	m.InterruptionDequeued("spot_interrupted", time.Time{}, time.Now())
	m.InterruptionActed("CordonAndDrain", "general-purpose")
	m.Collected("instance")
}

func TestNilMetricsRecordNothingAndDoNotPanic(t *testing.T) {
	var m *Metrics
	recordOneOfEach(m)
}

func TestMethodsRecordOnTheirCollectors(t *testing.T) {
	m := New()
	recordOneOfEach(m)
	m.PodUnschedulable() // a second one: the counter adds up

	for name, c := range map[string]struct{ got, want float64 }{
		"pods pending":          {testutil.ToFloat64(m.PodsPending), 3},
		"pods unschedulable":    {testutil.ToFloat64(m.PodsUnschedulable), 2},
		"created":               {testutil.ToFloat64(m.NodeClaimsCreated.WithLabelValues("general-purpose")), 1},
		"launched":              {testutil.ToFloat64(m.NodeClaimsLaunched.WithLabelValues("general-purpose", "m7i.large", "spot", "us-east-1a")), 1},
		"registered":            {testutil.ToFloat64(m.NodeClaimsRegistered.WithLabelValues("general-purpose", "m7i.large", "spot", "us-east-1a")), 1},
		"terminated":            {testutil.ToFloat64(m.NodeClaimsTerminated.WithLabelValues("general-purpose", "drifted")), 1},
		"invalid nodepools":     {testutil.ToFloat64(m.InvalidNodePools), 1},
		"insufficient capacity": {testutil.ToFloat64(m.InsufficientCapacity.WithLabelValues("m7i.large", "us-east-1a", "spot")), 1},
		"eligible":              {testutil.ToFloat64(m.DisruptionEligibleNodes), 4},
		"decisions":             {testutil.ToFloat64(m.DisruptionDecisions.WithLabelValues("empty", "proposed")), 1},
		"received":              {testutil.ToFloat64(m.InterruptionReceived.WithLabelValues("spot_interrupted")), 1},
		"actions":               {testutil.ToFloat64(m.InterruptionActions.WithLabelValues("CordonAndDrain")), 1},
		"collected":             {testutil.ToFloat64(m.GarbageCollected.WithLabelValues("instance")), 1},
		"throttled":             {testutil.ToFloat64(m.CloudThrottledRequests.WithLabelValues("EC2", "DescribeInstances")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.ProvisionDuration); n != 1 {
		t.Errorf("provision duration series = %d, want 1", n)
	}
	if n := testutil.CollectAndCount(m.CloudRequestDuration); n != 1 {
		t.Errorf("cloud request series = %d, want 1", n)
	}
}
