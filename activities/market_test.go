package activities

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// pendingPod is an Unschedulable pod of 1.5 vCPU (one per c*.large node),
// pinned to zone unless it is empty.
func pendingPod(name, zone string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.Unix(1_700_000_000, 0)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	if zone != "" {
		p.Spec.NodeSelector = map[string]string{apiv1.LabelZone: zone}
	}
	return p
}

// refreshMarket reads the local EC2's offerings and spot prices into the Market
// as the controller does.
func refreshMarket(t *testing.T, a *Activities) {
	t.Helper()
	zones, err := a.Launch.cloud.InstanceTypeZones(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	prices, err := a.Launch.cloud.SpotPrices(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a.Launch.market.SetZones(zones)
	a.Launch.market.SetSpotPrices(prices)
}

// withMarket gives the activities a Market, empty until refreshMarket.
func withMarket(d *Deps) { d.Market = catalog.NewMarket() }

// planned is, by pod, the cheapest offering of the first instance type of
// the new NodeClaim holding it, and the types that claim lists.
func planned(t *testing.T, a *Activities) (map[string]solver.InstanceTypeOption, map[string][]string) {
	t.Helper()
	snap, err := a.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	snap.input.Budget = -1
	plan := solver.Solve(snap.input)
	if len(plan.Unschedulable) > 0 {
		t.Fatalf("unschedulable: %+v", plan.Unschedulable)
	}
	first, listed := map[string]solver.InstanceTypeOption{}, map[string][]string{}
	for _, nc := range plan.NewNodeClaims {
		for _, p := range nc.Pods {
			first[p] = solver.InstanceTypeOption{Type: nc.InstanceTypes[0].Type, Offerings: []catalog.Offering{solver.CheapestOffering(nc.InstanceTypes[0].Offerings)}}
			for _, it := range nc.InstanceTypes {
				listed[p] = append(listed[p], it.Type.Name)
			}
		}
	}
	return first, listed
}

// The plan follows the local EC2's market, read as the controller reads
// it: us-east-1c does not sell c7a (simec2.DefaultNotOffered), so a pod
// pinned there gets c6i.large though c7a.large is cheaper elsewhere; a
// zone-free pod goes to the zone where c7a.large's spot price is lowest,
// and to the next one once that price moves; launches are priced at the
// zone's spot price.
func TestPlanFollowsTheMarket(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "spot"},
		Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
			NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
				{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeSpot}},
				{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"c7a.large", "c6i.large"}},
			},
		}}}}
	a, srv, _ := launchWorldDeps(t, []*apiv1.NodePool{np}, withMarket,
		[]runtime.Object{pendingPod("pin-1a", "us-east-1a"), pendingPod("pin-1c", "us-east-1c"), pendingPod("free", "")}...)
	for _, p := range []struct {
		typ, zone string
		price     float64
	}{
		{"c7a.large", "us-east-1a", 0.0200}, {"c7a.large", "us-east-1b", 0.0210},
		{"c6i.large", "us-east-1a", 0.0300}, {"c6i.large", "us-east-1b", 0.0300}, {"c6i.large", "us-east-1c", 0.0300},
	} {
		if err := srv.SetSpotPrice(p.typ, p.zone, p.price); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.SetSpotPrice("c7a.large", "us-east-1c", 0.01); err == nil {
		t.Fatal("the local EC2 sells c7a.large in us-east-1c")
	}
	refreshMarket(t, a)

	check := func(when string, want map[string][3]string) {
		t.Helper()
		first, types := planned(t, a)
		for pod, w := range want {
			got := first["default/"+pod]
			if got.Type == nil {
				t.Errorf("%s: %s not planned", when, pod)
				continue
			}
			o := got.Offerings[0]
			if g := [3]string{got.Type.Name, o.Zone, formatPrice(o.Price)}; g != w {
				t.Errorf("%s: %s on %v, want %v", when, pod, g, w)
			}
		}
		for _, n := range types["default/pin-1c"] {
			if n == "c7a.large" {
				t.Errorf("%s: pin-1c's NodeClaim lists c7a.large, which us-east-1c does not sell", when)
			}
		}
	}
	check("first plan", map[string][3]string{
		"pin-1a": {"c7a.large", "us-east-1a", "0.0200"},
		"pin-1c": {"c6i.large", "us-east-1c", "0.0300"},
		"free":   {"c7a.large", "us-east-1a", "0.0200"},
	})

	// c7a.large in 1a rises above 1b's 0.0210: the next plan moves the
	// zone-free pod to 1b.
	if err := srv.SetSpotPrice("c7a.large", "us-east-1a", 0.0250); err != nil {
		t.Fatal(err)
	}
	refreshMarket(t, a)
	check("after the move", map[string][3]string{
		"pin-1a": {"c7a.large", "us-east-1a", "0.0250"},
		"pin-1c": {"c6i.large", "us-east-1c", "0.0300"},
		"free":   {"c7a.large", "us-east-1b", "0.0210"},
	})

	// A launched instance is priced at its zone's spot price.
	if got := a.Launch.toInstance(aws.Instance{ID: "i-1", Type: "c7a.large", Zone: "us-east-1b", CapacityType: apiv1.CapacityTypeSpot}).Price; got != 0.0210 {
		t.Errorf("instance price %v, want 0.0210", got)
	}
}

func formatPrice(p float64) string { return fmt.Sprintf("%.4f", p) }

// The plan follows the instance types EC2 describes (DescribeInstanceTypes
// through the real SDK, read into the Market as the controller does): a
// type the answer lacks is never planned, though cheapest; a fact the
// answer changes (c6i.large with 2 GiB of memory) changes the plan.
func TestPlanFollowsTheInstanceTypes(t *testing.T) {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "od"},
		Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
			NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
				{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}},
				{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"c6a.large", "c6i.large", "m6i.large"}},
			},
		}}}}
	pod := pendingPod("app", "us-east-1a")
	pod.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
	a, _, _ := launchWorldDeps(t, []*apiv1.NodePool{np}, withMarket, pod)
	refreshMarket(t, a)
	answer, err := a.Launch.cloud.InstanceTypes(context.Background(), catalog.MustDefault())
	if err != nil {
		t.Fatal(err)
	}
	setTypes := func(edit func(*catalog.InstanceType) bool) {
		var kept []*catalog.InstanceType
		for _, it := range answer {
			c := *it
			if edit(&c) {
				kept = append(kept, &c)
			}
		}
		a.Launch.market.SetTypes(catalog.New(kept))
	}
	plannedType := func(when string) (string, []string) {
		t.Helper()
		first, listed := planned(t, a)
		got := first["default/app"]
		if got.Type == nil {
			t.Fatalf("%s: app not planned", when)
		}
		return got.Type.Name, listed["default/app"]
	}

	setTypes(func(*catalog.InstanceType) bool { return true })
	if got, _ := plannedType("the whole answer"); got != "c6a.large" {
		t.Errorf("the whole answer: app on %s, want the cheapest c6a.large (0.0765 USD/hour)", got)
	}
	setTypes(func(it *catalog.InstanceType) bool { return it.Name != "c6a.large" })
	got, listed := plannedType("without c6a.large")
	if got != "c6i.large" {
		t.Errorf("without c6a.large: app on %s, want c6i.large", got)
	}
	for _, n := range listed {
		if n == "c6a.large" {
			t.Errorf("without c6a.large: the NodeClaim lists c6a.large, which the answer lacks")
		}
	}
	setTypes(func(it *catalog.InstanceType) bool {
		if it.Name == "c6i.large" {
			it.MemoryMiB = 2048
		}
		return it.Name != "c6a.large"
	})
	if got, _ := plannedType("c6i.large with 2 GiB"); got != "m6i.large" {
		t.Errorf("c6i.large with 2 GiB: app (2Gi) on %s, want m6i.large", got)
	}
	// The live catalog knows c6i.large's new memory; a running node of a
	// type the answer dropped keeps its embedded facts.
	if it, _ := a.Launch.types.Get("c6i.large"); it.MemoryMiB != 2048 {
		t.Errorf("c6i.large memory %d, want the answer's 2048", it.MemoryMiB)
	}
	if it, ok := a.Launch.types.Get("c6a.large"); !ok || it.MemoryMiB != 4096 {
		t.Errorf("c6a.large (dropped from the answer) = %v, %v; want the embedded type", it, ok)
	}
}
