//go:build integration

package main

import (
	"testing"
	"time"
)

// The bench at N = 200 as CI's smoke test: every pod Running, one
// NodeClaim workflow per node, no workflow failed and no Temporal size
// limit reported. Times are printed, not asserted.
func TestBenchSmoke(t *testing.T) {
	r, err := run(200, fastPhases, 8*time.Minute, 5*time.Second, false, profiles{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("200 pods: launched %s after the last pod, Running %s after; %d nodes, %.2f USD/hour (bound %.2f); worker RSS %.0f MiB",
		r.LaunchedAfterLastPod.Round(time.Millisecond), r.RunningAfterLastPod.Round(time.Millisecond), r.Nodes, r.USDPerHour, r.LowerBound, r.WorkerPeakRSSMiB)
	if r.Nodes == 0 || r.NodeClaimRuns != r.Nodes || r.ProvisionRuns == 0 {
		t.Errorf("%d nodes, %d NodeClaim and %d Provision workflows", r.Nodes, r.NodeClaimRuns, r.ProvisionRuns)
	}
	if r.BootP50 < 3*time.Second || r.BootMax < r.BootP50 {
		t.Errorf("boot p50 %s, max %s: the nodes did not go through the 1 s phases", r.BootP50, r.BootMax)
	}
	if r.FailedWorkflows != 0 || r.LimitWarnings != 0 {
		t.Errorf("%d workflows failed, %d Temporal limit warnings", r.FailedWorkflows, r.LimitWarnings)
	}
	if r.USDPerHour < r.LowerBound || r.WorkerPeakRSSMiB == 0 || len(r.ActivityLatency) == 0 {
		t.Errorf("USD/hour %.3f below the bound %.3f, worker RSS %.0f, %d activity latencies", r.USDPerHour, r.LowerBound, r.WorkerPeakRSSMiB, len(r.ActivityLatency))
	}
	if r.SingleBatchUSD < r.LowerBound || r.SingleBatchNodes == 0 || r.PlannedUSD <= 0 {
		t.Errorf("single-batch plan %.3f USD/hour on %d nodes, bound %.3f; the run's plans %.3f", r.SingleBatchUSD, r.SingleBatchNodes, r.LowerBound, r.PlannedUSD)
	}
	if r.LastPodMarked <= 0 || r.LaunchedAfterLastMarked != r.AllLaunched-r.LastPodMarked || len(r.Provisions) != r.ProvisionRuns {
		t.Errorf("last pod marked %s, launched after it %s, %d Provision spans for %d workflows", r.LastPodMarked, r.LaunchedAfterLastMarked, len(r.Provisions), r.ProvisionRuns)
	}
	if r.RestCPUShare <= 0 || r.RestCPUShare > 2 {
		t.Errorf("worker at rest used %.3f of a core (2 cores: between 0 and 2)", r.RestCPUShare)
	}
	if r.SchedulerAttempts["scheduled"] < 200 {
		t.Errorf("kube-scheduler attempts %v: fewer scheduled than the 200 pods", r.SchedulerAttempts)
	}
	for i, q := range r.SchedulerQueue {
		if i > 0 && (q.Scheduled < r.SchedulerQueue[i-1].Scheduled || q.At <= r.SchedulerQueue[i-1].At) {
			t.Errorf("kube-scheduler samples %+v then %+v: attempts or time went back", r.SchedulerQueue[i-1], q)
		}
	}
	if len(r.SchedulerQueue) == 0 {
		t.Error("no sample of the kube-scheduler's queue")
	}
	if r.Fleets.Calls == 0 || r.Fleets.Distinct == 0 || r.Fleets.Distinct > r.Fleets.Calls {
		t.Errorf("CreateFleet figures %+v", r.Fleets)
	}
}
