//go:build integration

package integration

import (
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A static NodePool of 3 (StaticCapacity on) keeps 3 Ready, initialized
// nodes through a `kubectl delete node` of one and a spot interruption of
// another: each
// lost node is replaced by one new NodeClaim (5 NodeClaims in all), and
// a pending pod only the pool could take never gets a node of it.
func TestStaticNodePoolKeepsItsCount(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.FeatureGates.StaticCapacity = true
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
	})
	e.applyWithDefaultClass(t, "testdata/static.yaml")

	seen := map[string]bool{} // every NodeClaim of the pool ever listed
	maxLive := 0
	claims := func() {
		live := 0
		for _, nc := range e.nodeClaims(t) {
			if nc.GetLabels()[apiv1.LabelNodePool] != "fixed" {
				continue
			}
			seen[nc.GetName()] = true
			if nc.GetDeletionTimestamp() == nil && !disrupting(nc) {
				live++
			}
		}
		maxLive = max(maxLive, live)
	}
	ready := func() []string {
		claims()
		nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=fixed"})
		if err != nil {
			return nil
		}
		var out []string
		for _, n := range nodes.Items {
			// Initialized: the NodeClaim saga has registered the node (a
			// node deleted before that waits out the registration TTL).
			if n.DeletionTimestamp != nil || n.Labels[apiv1.LabelNodeInitialized] != "true" {
				continue
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					out = append(out, n.Name)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	without := func(nodes []string, gone string) bool {
		for _, n := range nodes {
			if n == gone {
				return false
			}
		}
		return len(nodes) == 3
	}
	var nodes []string
	waitFor(t, 4*time.Minute, "3 Ready nodes in the static pool", func() bool { nodes = ready(); return len(nodes) == 3 })
	t.Logf("static pool: %v", nodes)
	// Each NodeClaim is written and its saga started by the pool's
	// Provision workflow (one durable step: a leader dying in between
	// leaves no NodeClaim without a saga).
	for name := range seen {
		d, err := e.tc.DescribeWorkflowExecution(e.ctx, workflows.NodeClaimWorkflowID(name), "")
		if err != nil {
			t.Fatalf("saga of %s: %v", name, err)
		}
		if p := d.GetWorkflowExecutionInfo().GetParentExecution().GetWorkflowId(); p != workflows.StaticProvisionWorkflowID("fixed") {
			t.Errorf("saga of %s started by %q, want %s", name, p, workflows.StaticProvisionWorkflowID("fixed"))
		}
	}
	recordHistoryAs(t, e, workflows.StaticProvisionWorkflowID("fixed"), "provision-static")

	deleted := nodes[0]
	if err := e.kc.CoreV1().Nodes().Delete(e.ctx, deleted, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 4*time.Minute, "3 Ready nodes again after deleting "+deleted, func() bool { nodes = ready(); return without(nodes, deleted) })
	t.Logf("after deleting %s: %v", deleted, nodes)

	interrupted := nodes[0]
	res, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: interrupted, Kind: world.SimSpot, Notice: world.DefaultNotice})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("spot interruption of %s (%s)", interrupted, res.InstanceID)
	waitFor(t, 5*time.Minute, "3 Ready nodes again after interrupting "+interrupted, func() bool {
		nodes = ready()
		if !without(nodes, interrupted) {
			return false
		}
		_, err := e.kc.CoreV1().Nodes().Get(e.ctx, interrupted, metav1.GetOptions{})
		return err != nil // the interrupted node is gone
	})
	t.Logf("after interrupting %s: %v", interrupted, nodes)

	claims()
	if len(seen) != 5 {
		t.Errorf("%d NodeClaims of the static pool over the test, want 5 (3 + 2 replacements): %v", len(seen), seen)
	}
	if maxLive > 3 {
		t.Errorf("up to %d NodeClaims of the static pool neither deleted nor disrupted at once, want at most 3", maxLive)
	}
	p, err := e.kc.CoreV1().Pods("default").Get(e.ctx, "too-big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("pod too-big bound to %s", p.Spec.NodeName)
	}
}

// disrupting: the NodeClaim's DisruptionReason condition is True (its
// static replacement is launched while it drains).
func disrupting(nc metav1.Object) bool {
	u, ok := nc.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]interface{})
		if m["type"] == "DisruptionReason" && m["status"] == "True" {
			return true
		}
	}
	return false
}
