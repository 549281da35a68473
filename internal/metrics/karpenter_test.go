package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestKarpenterMethodsRecordKarpenterSeries(t *testing.T) {
	m := New()
	k := m.Karpenter
	m.NodeClaimCreatedBy("default", "provisioned", false)
	m.NodeClaimRegistered("default", "m7i.large", "spot", "us-east-1a")
	m.NodeClaimEnded("default", "disrupted: underutilized", "spot", "us-east-1a", true)
	m.NodeClaimEnded("default", "registration timeout", "on-demand", "us-east-1b", false)
	m.NodeClaimDisruptedBy("default", "underutilized", "spot", "when_empty_or_underutilized", "graceful")
	m.Scheduled(ControllerProvisioner, 0.2, 3)
	m.Scheduled(ControllerDisruption, 0.3, 0)
	m.SetQueueDepth(ControllerProvisioner, "batch-1", 10)
	m.SetQueueDepth(ControllerProvisioner, "batch-2", 0)
	m.SetEligibleByReason(map[string]int{"empty": 2, "underutilized": 5})
	m.DisruptionActed("replace", "underutilized", "multi", []string{"default", "default", "gpu"})
	m.DisruptionValidationFailed("single")
	now := time.Now()
	m.InterruptionDequeued("spot_interrupted", now.Add(-3*time.Second), now)
	m.InterruptionMessageDeleted()
	m.InterruptionActed("CordonAndDrain", "default")
	m.CloudProviderCall(ControllerLifecycle, MethodCreate, 0.5, true, ErrorInsufficientCapacity)
	m.CloudProviderCall(ControllerLifecycle, MethodCreate, 0.4, false, "")
	m.SetAllowedDisruptions("default", "Underutilized", 1)

	for name, c := range map[string]struct{ got, want float64 }{
		"created":            {testutil.ToFloat64(k.NodeClaimsCreated.WithLabelValues("provisioned", "default", "false")), 1},
		"nodes created":      {testutil.ToFloat64(k.NodesCreated.WithLabelValues("default", "us-east-1a")), 1},
		"terminated spot":    {testutil.ToFloat64(k.NodeClaimsTerminated.WithLabelValues("default", "spot", "us-east-1a")), 1},
		"terminated od":      {testutil.ToFloat64(k.NodeClaimsTerminated.WithLabelValues("default", "on-demand", "us-east-1b")), 1},
		"nodes terminated":   {testutil.ToFloat64(k.NodesTerminated.WithLabelValues("default", "us-east-1a")), 1},
		"no node, no node":   {float64(testutil.CollectAndCount(k.NodesTerminated)), 1},
		"disrupted":          {testutil.ToFloat64(k.NodeClaimsDisrupted.WithLabelValues("underutilized", "default", "spot", "when_empty_or_underutilized", "graceful")), 1},
		"unschedulable":      {testutil.ToFloat64(k.UnschedulablePods.WithLabelValues("provisioner")), 3},
		"queue depth series": {float64(testutil.CollectAndCount(k.QueueDepth)), 1},
		"queue depth":        {testutil.ToFloat64(k.QueueDepth.WithLabelValues("provisioner", "batch-2")), 0},
		"eligible empty":     {testutil.ToFloat64(k.DisruptionEligibleNodes.WithLabelValues("empty")), 2},
		"decisions":          {testutil.ToFloat64(k.DisruptionDecisions.WithLabelValues("replace", "underutilized", "multi")), 1},
		"decisions default":  {testutil.ToFloat64(k.DisruptionDecisionsByPool.WithLabelValues("default", "replace", "underutilized", "multi")), 1},
		"decisions gpu":      {testutil.ToFloat64(k.DisruptionDecisionsByPool.WithLabelValues("gpu", "replace", "underutilized", "multi")), 1},
		"failed validations": {testutil.ToFloat64(k.DisruptionFailedChecks.WithLabelValues("single")), 1},
		"received":           {testutil.ToFloat64(k.InterruptionReceived.WithLabelValues("spot_interrupted")), 1},
		"deleted":            {testutil.ToFloat64(k.InterruptionDeleted), 1},
		"actions":            {testutil.ToFloat64(k.InterruptionActions.WithLabelValues("CordonAndDrain", "default")), 1},
		"actions_total":      {testutil.ToFloat64(k.InterruptionActionsTotal.WithLabelValues("CordonAndDrain", "default")), 1},
		"cloud errors":       {testutil.ToFloat64(k.CloudProviderErrors.WithLabelValues("nodeclaim.lifecycle", "Create", "aws", "InsufficientCapacityError")), 1},
		"allowed":            {testutil.ToFloat64(k.AllowedDisruptions.WithLabelValues("default", "Underutilized")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	// Both launches are timed, one series.
	if n := testutil.CollectAndCount(k.CloudProviderDuration); n != 1 {
		t.Errorf("cloudprovider duration series = %d, want 1", n)
	}
	// The pre-v1 scheduling histogram times the provisioner's solves only.
	if got := testutil.CollectAndCount(k.SchedulingDuration); got != 2 {
		t.Errorf("scheduling duration series = %d, want 2 (provisioner, disruption)", got)
	}
	if got, want := histogramCount(t, k.ProvisionerSchedulingDuration), uint64(1); got != want {
		t.Errorf("karpenter_provisioner_scheduling_duration_seconds count = %d, want %d", got, want)
	}
	if n := testutil.CollectAndCount(k.InterruptionQueueDuration); n != 1 {
		t.Errorf("queue duration series = %d, want 1", n)
	}
}

func TestKarpenterLabelValues(t *testing.T) {
	for in, want := range map[string]string{"WhenEmptyOrUnderutilized": "when_empty_or_underutilized", "Balanced": "balanced", "Drifted": "drifted", "": ""} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"emptiness": "empty", "multi-node": "multi", "single-node": "single", "drift": ""} {
		if got := ConsolidationType(in); got != want {
			t.Errorf("ConsolidationType(%q) = %q, want %q", in, got, want)
		}
	}
	zero, hour := time.Duration(0), time.Hour
	if TerminationMode(nil) != "graceful" || TerminationMode(&zero) != "forceful" || TerminationMode(&hour) != "eventual" {
		t.Error("TerminationMode: want graceful (nil), forceful (0), eventual (1h)")
	}
}

func TestNilMetricsRecordNoKarpenterSeries(t *testing.T) {
	var m *Metrics
	m.NodeClaimEnded("p", "r", "spot", "z", true)
	m.NodeClaimDisruptedBy("p", "r", "spot", "", "graceful")
	m.Scheduled(ControllerProvisioner, 1, 1)
	m.SetQueueDepth(ControllerProvisioner, "b", 1)
	m.SetEligibleByReason(map[string]int{"empty": 1})
	m.DisruptionActed("delete", "empty", "empty", nil)
	m.DisruptionValidationFailed("multi")
	m.ObserveDisruptionEvaluation("", "", 1)
	m.SetAllowedDisruptions("p", "Empty", 1)
	m.InterruptionMessageDeleted()
	m.CloudProviderCall(ControllerGC, MethodList, 1, false, "")
}

// histogramCount is the observations of a histogram.
func histogramCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
