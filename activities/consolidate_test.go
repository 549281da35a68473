package activities

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func sagaPool(budget string) *apiv1.NodePool {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose"}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "web"}
	np.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: budget}}
	return np
}

// sagaNodes are n nodes of general-purpose with their NodeClaims; the
// first `tainted` are already being disrupted.
func sagaNodes(n, tainted int) ([]*apiv1.NodeClaim, []runtime.Object, []string) {
	var claims []*apiv1.NodeClaim
	var objs []runtime.Object
	var names []string
	for i := 0; i < n; i++ {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-0-0-%d.ec2.internal", i+1), Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
			Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///us-east-1a/i-%04d", i+1)}}
		if i < tainted {
			node.Spec.Taints = []corev1.Taint{{Key: apiv1.TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule}}
		}
		claims = append(claims, &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("general-purpose-%05d", i+1), Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
			Status: apiv1.NodeClaimStatus{NodeName: node.Name, ProviderID: node.Spec.ProviderID}})
		objs = append(objs, node)
		if i >= tainted {
			names = append(names, node.Name)
		}
	}
	return claims, objs, names
}

// The budget is counted for the decision's nodes together: a budget of 3
// with one node already being disrupted lets two more go, not three.
func TestCheckDisruptionCandidatesCountsTheBudgetForAllNodes(t *testing.T) {
	claims, objs, names := sagaNodes(4, 1)
	a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{sagaPool("3")}, Claims: claims, Objects: objs})
	ctx := context.Background()
	set, err := a.Disruption.CheckDisruptionCandidates(ctx, workflows.CandidatesRequest{Nodes: names, Reason: saga.ReasonUnderused})
	if err != nil {
		t.Fatal(err)
	}
	const why = "NodePool general-purpose disruption budget allows no more nodes to be disrupted at once"
	if len(set.Candidates) != 3 || !set.Candidates[0].OK || !set.Candidates[1].OK || set.Candidates[2].OK || set.Why != "node "+names[2]+": "+why {
		t.Fatalf("set %+v", set)
	}
	if c := set.Candidates[0]; c.NodeName != names[0] || c.NodeClaim != "general-purpose-00002" || c.InstanceID != "i-0002" || c.NodePool != "general-purpose" {
		t.Errorf("candidate %+v", c)
	}
	// Emptiness goes on with the two the budget allows.
	set, err = a.Disruption.CheckDisruptionCandidates(ctx, workflows.CandidatesRequest{Nodes: names, Reason: saga.ReasonEmpty, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if set.Why != "" || len(set.OK()) != 2 || set.Candidates[2].Why != why {
		t.Fatalf("partial set %+v", set)
	}
}

// The replacement's NodeClaim is the decision's plan: its instance types
// (in order), its pinned capacity type, its requests; the saga launches
// the planned offerings.
func TestCreateReplacementWritesThePlannedNodeClaim(t *testing.T) {
	a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{sagaPool("10%")}})
	plan := saga.Replacement{NodePool: "general-purpose", InstanceTypes: []string{"c6a.large", "m6a.large"},
		Offerings: []saga.Offering{{InstanceType: "c6a.large", Zone: "us-east-1a", CapacityType: "spot", Price: 0.03},
			{InstanceType: "m6a.large", Zone: "us-east-1b", CapacityType: "spot", Price: 0.04}},
		Requirements: []saga.Requirement{{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}},
			{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"spot"}}},
		Requests: map[string]string{"cpu": "2500m", "memory": "1Gi", "pods": "3"}, Pods: 3, USDPerHour: 0.03, MaxUSDPerHour: 0.04}
	in, err := a.Disruption.CreateReplacement(context.Background(), workflows.ReplacementRequest{Replacement: plan, For: []string{"n1", "n2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(in.Name, "general-purpose-") || in.NodePool != "general-purpose" || in.Pods != 3 || !reflect.DeepEqual(in.Offerings, plan.Offerings) {
		t.Fatalf("input %+v", in)
	}
	nc, err := a.cluster().NodeClaim(context.Background(), in.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"spot"}},
		{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"c6a.large", "m6a.large"}}}
	if !reflect.DeepEqual(nc.Spec.Requirements, want) {
		t.Errorf("requirements %+v, want %+v", nc.Spec.Requirements, want)
	}
	cpu, mem := nc.Spec.Resources.Requests[corev1.ResourceCPU], nc.Spec.Resources.Requests[corev1.ResourceMemory]
	if cpu.String() != "2500m" || mem.String() != "1Gi" {
		t.Errorf("requests %v", nc.Spec.Resources.Requests)
	}
	if nc.Labels[apiv1.LabelNodePool] != "general-purpose" || nc.Labels["team"] != "web" || len(nc.Finalizers) != 1 {
		t.Errorf("labels %v finalizers %v", nc.Labels, nc.Finalizers)
	}
	// A plan whose pool is gone fails for good.
	plan.NodePool = "gone"
	if _, err := a.Disruption.CreateReplacement(context.Background(), workflows.ReplacementRequest{Replacement: plan}); err == nil || !strings.Contains(err.Error(), "NodePool gone is gone") {
		t.Errorf("err %v", err)
	}
}

// The re-check before acting simulates with the decision's nodes already
// tainted: the snapshot leaves tainted nodes out as destinations, and
// addRemoved brings them back, priced, as the nodes to remove.
func TestAddRemovedBringsBackTheTaintedCandidates(t *testing.T) {
	claims, objs, _ := sagaNodes(2, 2)
	for _, o := range objs {
		n := o.(*corev1.Node)
		n.Labels[apiv1.LabelInstanceType], n.Labels[apiv1.LabelCapacityType] = "m6i.large", apiv1.CapacityTypeOnDemand
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	}
	a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{sagaPool("10%")}, Claims: claims, Objects: objs})
	snap, err := a.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.input.ExistingNodes) != 0 {
		t.Fatalf("tainted nodes are destinations: %+v", snap.input.ExistingNodes)
	}
	a.Disruption.addRemoved(snap, []string{"ip-10-0-0-1.ec2.internal", "ip-10-0-0-2.ec2.internal", "gone"})
	it, _ := catalog.MustDefault().Get("m6i.large")
	if len(snap.input.ExistingNodes) != 2 || snap.input.ExistingNodes[1].Price != it.OnDemandPrice || snap.input.ExistingNodes[0].NodePool != "general-purpose" {
		t.Fatalf("existing nodes %+v", snap.input.ExistingNodes)
	}
	r := solver.SimulateRemoval(snap.input, []string{"ip-10-0-0-1.ec2.internal", "ip-10-0-0-2.ec2.internal"})
	if !r.Possible || r.CandidatesUSDPerHour != 2*it.OnDemandPrice || r.Replacement != nil {
		t.Fatalf("simulation %+v", r)
	}
}
