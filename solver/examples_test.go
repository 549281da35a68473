package solver

import (
	"math"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// exampleUnitPrice is the lowest USD/hour per unit of allocatable resource r
// over every type and offering the pod may use in any example pool (taints
// tolerated, node selector met).
func exampleUnitPrice(p Pod, pools []NodePool, r int) float64 {
	best := math.Inf(1)
	for _, np := range pools {
		blocked := false
		for _, taint := range np.Taints {
			ok := false
			for _, tl := range p.Tolerations {
				ok = ok || (tl.Key == taint.Key && (tl.Operator == corev1.TolerationOpExists || tl.Value == taint.Value))
			}
			blocked = blocked || !ok
		}
		if blocked {
			continue
		}
		for _, o := range np.InstanceTypes {
			if o.Shape.Allocatable[r] <= 0 {
				continue
			}
			labels := o.Type.Labels()
			for _, of := range o.Offerings {
				labels[apiv1.LabelCapacityType] = of.CapacityType
				match := of.Available
				for k, v := range p.NodeSelector {
					match = match && labels[k] == v
				}
				if match {
					best = math.Min(best, of.Price/float64(o.Shape.Allocatable[r]))
				}
			}
		}
	}
	return best
}

// TestExamplesPlan solves the example workloads over the example NodePools
// and the real catalog.
func TestExamplesPlan(t *testing.T) {
	pools := examplePools(t)
	var ps []Pod
	for _, p := range exampleK8sPods(t) {
		ps = append(ps, PodFromK8s(p))
	}
	if len(ps) != 70 {
		t.Fatalf("%d example pods, want 70 (50 inflate, 3 redis, 10 web, 1 trainer, 6 arm-batch)", len(ps))
	}
	in := Input{Pods: ps, NodePools: pools}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 || len(plan.ExistingPlacements) != 0 {
		t.Fatalf("unschedulable %+v, existing %+v", plan.Unschedulable, plan.ExistingPlacements)
	}
	for _, nc := range plan.NewNodeClaims {
		t.Logf("%-15s %-14s %.4f USD/h  %2d pods  %s", nc.NodePool, nc.InstanceTypes[0].Type.Name, nc.Price(), len(nc.Pods), nc.Requests)
	}

	// The trainer: 4 NVIDIA GPUs, from pool gpu, on the cheapest such type.
	tr := claimOf(&plan, "default/trainer")
	first := tr.InstanceTypes[0]
	if tr.NodePool != "gpu" || first.Type.GPUCount != 4 || first.Type.GPUManufacturer != "nvidia" || first.Shape.Allocatable[resources.NvidiaGPU] != 4 {
		t.Errorf("trainer on %s %s", tr.NodePool, first.Type.Name)
	}
	g4dn12, _ := catalog.MustDefault().Get("g4dn.12xlarge")
	if first.Type.Name != "g4dn.12xlarge" || tr.Price() != g4dn12.OnDemandPrice {
		t.Errorf("trainer on %s at %.3f, want g4dn.12xlarge at %.3f", first.Type.Name, tr.Price(), g4dn12.OnDemandPrice)
	}
	if len(tr.Pods) != 1 {
		t.Errorf("trainer shares its node with %v", tr.Pods)
	}

	for _, p := range ps {
		nc := claimOf(&plan, p.Key())
		switch {
		case strings.HasPrefix(p.Name, "redis-cluster-"):
			// 16Gi each, on-demand only: every listed type has room for it.
			for _, o := range nc.InstanceTypes {
				if o.Shape.Allocatable[resources.Memory] < 16<<30 {
					t.Errorf("redis %s offered %s with %d MiB allocatable", p.Name, o.Type.Name, o.Shape.Allocatable[resources.Memory]>>20)
				}
				for _, of := range o.Offerings {
					if of.CapacityType != apiv1.CapacityTypeOnDemand {
						t.Errorf("redis %s offered %s %s", p.Name, o.Type.Name, of.CapacityType)
					}
				}
			}
		case strings.HasPrefix(p.Name, "arm-batch-"):
			for _, o := range nc.InstanceTypes {
				if o.Type.Arch != "arm64" {
					t.Errorf("arm-batch %s offered %s (%s)", p.Name, o.Type.Name, o.Type.Arch)
				}
			}
		case strings.HasPrefix(p.Name, "inflate-"):
			if nc.NodePool != "general-purpose" {
				t.Errorf("inflate %s in %s", p.Name, nc.NodePool)
			}
		}
	}

	// Price: everything but the trainer against a lower bound that holds for
	// any packing, max over cpu and memory of sum(request x cheapest USD per
	// allocatable unit the pod may use); a one-node-per-pod plan must fail
	// the same bound.
	var lbCPU, lbMem, rest, perPod float64
	for _, p := range ps {
		if p.Name == "trainer" {
			continue
		}
		lbCPU += float64(p.Requests[resources.CPU]) * exampleUnitPrice(p, pools, resources.CPU)
		lbMem += float64(p.Requests[resources.Memory]) * exampleUnitPrice(p, pools, resources.Memory)
		alone := Solve(Input{Pods: []Pod{p}, NodePools: pools})
		perPod += alone.Price()
	}
	for _, nc := range plan.NewNodeClaims {
		if nc.NodePool != "gpu" {
			rest += nc.Price()
		}
	}
	lower := math.Max(lbCPU, lbMem)
	const factor = 1.5
	t.Logf("without the trainer: plan %.4f USD/h, lower bound %.4f (cpu %.4f, memory %.4f), one node per pod %.4f; total %.4f on %d nodes",
		rest, lower, lbCPU, lbMem, perPod, plan.Price(), len(plan.NewNodeClaims))
	if rest > factor*lower {
		t.Errorf("plan costs %.4f USD/h, over %.1f x the lower bound %.4f", rest, factor, lower)
	}
	if perPod <= factor*lower {
		t.Errorf("the bound does not discriminate: one node per pod costs %.4f", perPod)
	}
}
