//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"go.temporal.io/api/workflowservice/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An account at its Standard spot vCPU quota (as in
// aws/karpenter-provider-aws#8885): the first refusal
// (MaxSpotInstanceCountExceeded) takes the whole quota out of the plans,
// so the pods go to the lower-weight on-demand pool at once instead of
// trying the spot pool's types one by one; when the quota is raised they
// come back to the spot pool by consolidation.
func TestSpotQuotaFallsBackToTheNextNodePool(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.w.EC2.SetVCPUQuota("standard", "spot", 0)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.ICETTL = 30 * time.Second
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	e.applyWithDefaultClass(t, "testdata/quota-fallback.yaml")
	waitFor(t, 3*time.Minute, "fallback-app Running", func() bool {
		n, _ := e.readyPods("app=fallback-app")
		return n == 6
	})
	if got := e.w.EC2.FleetErrorCounts()[ec2.CodeMaxSpotInstanceCountExceeded]; got == 0 {
		t.Fatal("no launch was refused for the spot quota: the test proves nothing")
	}
	spotTries := e.poolWorkflows(t, "spot-first")
	t.Logf("spot-first NodeClaims tried before the fallback: %d; on-demand-fallback nodes: %d",
		spotTries, len(e.poolClaims(t, "on-demand-fallback")))
	// The first plan's spot NodeClaims were refused; none came after it.
	// Marking offerings one by one would have tried the pool's other
	// spot types in plan after plan (hundreds of c, m and r types).
	if spotTries > 2 {
		t.Errorf("%d spot-first NodeClaims tried past the quota, want at most the first plan's (<= 2)", spotTries)
	}
	if n := len(e.poolClaims(t, "spot-first")); n != 0 {
		t.Errorf("%d spot-first nodes launched with a spot quota of 0", n)
	}

	// The quota raised, the spot pool is offered again once the mark
	// expires, and consolidation moves the pods back to cheaper spot nodes.
	e.w.EC2.SetVCPUQuota("standard", "spot", -1)
	waitFor(t, 4*time.Minute, "the pods back on spot-first nodes", func() bool {
		n, byNode := e.readyPods("app=fallback-app")
		if n != 6 {
			return false
		}
		for node := range byNode {
			nd, err := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
			if err != nil || nd.Labels[apiv1.LabelNodePool] != "spot-first" {
				return false
			}
		}
		return true
	})
	waitFor(t, 2*time.Minute, "the on-demand-fallback node to go", func() bool {
		return len(e.poolClaims(t, "on-demand-fallback")) == 0
	})
}

// poolWorkflows counts the NodeClaim workflows ever started for a
// NodePool (a refused NodeClaim's object is gone, its workflow stays).
func (e *env) poolWorkflows(t *testing.T, pool string) int {
	t.Helper()
	resp, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("NodePool = %q AND WorkflowType = %q", pool, "NodeClaim"), PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Executions)
}
