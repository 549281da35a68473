package solver

import (
	"math/rand/v2"
	"strconv"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// solveInBatches solves the pods of in in consecutive batches of the given
// sizes (pods shuffled by seed, as a scheduler's pace mixes workloads; 0
// keeps the generator's order),
// each batch seeing the earlier batches' NodeClaims as in-flight nodes the
// way the controller's snapshot passes them (inFlight). It returns the
// summed USD/hour and node count.
func solveInBatches(t *testing.T, in Input, sizes []int, seed uint64) (float64, int) {
	t.Helper()
	pods := append([]Pod(nil), in.Pods...)
	if seed > 0 {
		rand.New(rand.NewPCG(seed, 5)).Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	}
	price, nodes := 0.0, 0
	var inflight []Node
	for bi, n := range sizes {
		b := in
		b.Pods, pods = pods[:n], pods[n:]
		b.ExistingNodes = inflight
		plan := Solve(b)
		if len(plan.Unschedulable) > 0 {
			t.Fatalf("batch %d: %d unschedulable", bi, len(plan.Unschedulable))
		}
		inflight = applyPlacements(inflight, b, &plan)
		for i := range plan.NewNodeClaims {
			inflight = append(inflight, inFlight(&plan.NewNodeClaims[i], len(inflight)))
		}
		price += plan.Price()
		nodes += len(plan.NewNodeClaims)
	}
	return price, nodes
}

// inFlight is a planned NodeClaim as the controller's snapshot presents it
// to the next batch: labels from its pool and its single-valued In
// requirements, its taints, and as free capacity the smallest allocatable
// of its instance types minus its requests (pods and daemonset overhead).
func inFlight(nc *NewNodeClaim, i int) Node {
	labels := map[string]string{apiv1.LabelNodePool: nc.NodePool}
	for k, v := range nc.Labels {
		labels[k] = v
	}
	for _, r := range nc.Requirements {
		if r.Operator == apiv1.OpIn && len(r.Values) == 1 {
			labels[r.Key] = r.Values[0]
		}
	}
	alloc := nc.InstanceTypes[0].Shape.Allocatable
	for _, o := range nc.InstanceTypes[1:] {
		for r := range alloc {
			alloc[r] = min(alloc[r], o.Shape.Allocatable[r])
		}
	}
	return Node{Name: "nodeclaim/" + strconv.Itoa(i), Labels: labels, Taints: nc.Taints,
		Available: alloc.Sub(nc.Requests), NodePool: nc.NodePool}
}

// applyPlacements takes the requests of pods placed on in-flight nodes off
// their free capacity.
func applyPlacements(nodes []Node, in Input, plan *Plan) []Node {
	req := map[string]resources.List{}
	for i := range in.Pods {
		req[in.Pods[i].Key()] = in.Pods[i].Requests
	}
	at := map[string]int{}
	for i := range nodes {
		at[nodes[i].Name] = i
	}
	for _, p := range plan.ExistingPlacements {
		r := req[p.Pod]
		r[resources.Pods] = max(r[resources.Pods], 1)
		nodes[at[p.Node]].Available = nodes[at[p.Node]].Available.Sub(r)
	}
	return nodes
}

// Issue 21: a burst's total must not depend on how it was cut into
// batches: within 5% of the single-batch plan in cost, node counts close.
func TestSplitInvariance(t *testing.T) {
	in := mixedInput(t, 2000, 1, false)
	in.Budget = -1
	one, oneNodes := solveInBatches(t, in, []int{2000}, 1)
	for _, sizes := range [][]int{{1000, 1000}, {500, 500, 500, 500}, {200, 300, 700, 800}, {100, 1900}} {
		got, nodes := solveInBatches(t, in, sizes, 1)
		t.Logf("batches %v: %.2f $/hour on %d nodes (single batch %.2f on %d)", sizes, got, nodes, one, oneNodes)
		if got > one*1.05 {
			t.Errorf("batches %v cost %.2f, more than 5%% above the single batch's %.2f", sizes, got, one)
		}
	}
}

// A burst cut into k equal batches (k = 2, 5, 15) with the default budget
// plans within 5% of the single batch, whether the pods come in the
// generator's order (seed 0: workload after workload, as deployments
// created one after another are marked) or mixed (seeds 1, 2).
func TestSplitIntoKBatches(t *testing.T) {
	in := mixedInput(t, 2000, 1, false)
	one, _ := solveInBatches(t, in, []int{2000}, 0)
	for _, k := range []int{2, 5, 15} {
		sizes := make([]int, k)
		for i := range sizes {
			sizes[i] = 2000 / k
		}
		sizes[k-1] += 2000 % k
		for seed := range uint64(3) {
			got, nodes := solveInBatches(t, in, sizes, seed)
			t.Logf("k=%d seed=%d: %.2f $/hour on %d nodes, %.3f x the single batch's %.2f", k, seed, got, nodes, got/one, one)
			if got > one*1.05 {
				t.Errorf("k=%d seed=%d: %.2f, more than 5%% above the single batch's %.2f", k, seed, got, one)
			}
		}
	}
}
