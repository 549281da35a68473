package overlay

import (
	"math"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pool is an on-demand NodePool of families c5 and m5.
func pool(name string) solver.NodePool {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{
		ObjectMeta: apiv1.ObjectMeta{Labels: map[string]string{"team": "web"}},
		Spec: apiv1.NodeClaimTemplateSpec{Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
			{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"c5", "m5"}},
			{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeOnDemand}},
		}}}}}
	return solver.NodePoolFromAPI(np, nil, catalog.MustDefault(), catalog.DefaultZones, nil)
}

func overlay(name string, weight int32, change string, reqs ...v1alpha1.NodeSelectorRequirement) *v1alpha1.NodeOverlay {
	o := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodeOverlaySpec{Requirements: reqs, PriceAdjustment: &change}}
	if weight != 0 {
		o.Spec.Weight = &weight
	}
	if !strings.HasPrefix(change, "+") && !strings.HasPrefix(change, "-") {
		o.Spec.PriceAdjustment, o.Spec.Price = nil, &change
	}
	return o
}

func family(f string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: apiv1.LabelInstanceFamily, Operator: "In", Values: []string{f}}
}

func zone(z string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: apiv1.LabelZone, Operator: "In", Values: []string{z}}
}

// price is the pool's price of the type in the zone.
func price(t *testing.T, p solver.NodePool, typ, z string) float64 {
	t.Helper()
	for _, it := range p.InstanceTypes {
		if it.Type.Name != typ {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == z {
				return o.Price
			}
		}
	}
	t.Fatalf("no %s in %s", typ, z)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestADiscountMovesThePlanToTheFamily(t *testing.T) {
	pod := solver.Pod{Name: "default/web", Requests: resources.List{resources.CPU: 1000, resources.Memory: 1 << 30, resources.Pods: 1},
		NodeSelector: map[string]string{"team": "web"}}
	before := solver.Solve(solver.Input{NodePools: []solver.NodePool{pool("web")}, Pods: []solver.Pod{pod}})
	if got := before.NewNodeClaims[0].InstanceTypes[0].Type.Name; got != "c5.large" {
		t.Fatalf("without overlays the pod goes to %s, want c5.large (cheaper than m5.large)", got)
	}
	pools := []solver.NodePool{pool("web")}
	s := Resolve([]*v1alpha1.NodeOverlay{overlay("savings-plan", 10, "-30%", family("m5"))}, pools)
	s.Apply(pools)
	m5, _ := catalog.MustDefault().Get("m5.large")
	c5, _ := catalog.MustDefault().Get("c5.large")
	if got := price(t, pools[0], "m5.large", "us-east-1b"); !near(got, m5.OnDemandPrice*0.7) {
		t.Fatalf("m5.large at %v, want %v", got, m5.OnDemandPrice*0.7)
	}
	if got := price(t, pools[0], "c5.large", "us-east-1b"); got != c5.OnDemandPrice {
		t.Fatalf("c5.large at %v, want its list price %v", got, c5.OnDemandPrice)
	}
	after := solver.Solve(solver.Input{NodePools: pools, Pods: []solver.Pod{pod}})
	nc := after.NewNodeClaims[0]
	if nc.InstanceTypes[0].Type.Name != "m5.large" || !near(nc.Price(), m5.OnDemandPrice*0.7) {
		t.Fatalf("with -30%% on m5 the pod goes to %s at %v", nc.InstanceTypes[0].Type.Name, nc.Price())
	}
	if lb := solver.LowerBound(solver.Input{NodePools: pools, Pods: []solver.Pod{pod}}); lb > m5.OnDemandPrice*0.7+1e-9 {
		t.Fatalf("lower bound %v above the overlaid plan %v", lb, m5.OnDemandPrice*0.7)
	}
}

func TestWeightNameAndConflicts(t *testing.T) {
	m5, _ := catalog.MustDefault().Get("m5.large")
	pools := []solver.NodePool{pool("web"), pool("batch")}
	s := Resolve([]*v1alpha1.NodeOverlay{
		overlay("edp", 5, "-10%", family("m5")),
		overlay("savings", 10, "-20%", family("m5")),
		// Same weight, other zones: no conflict.
		overlay("zone-a", 3, "+0.01", zone("us-east-1a")),
		overlay("zone-b", 3, "+0.02", zone("us-east-1b")),
		// Same weight, same offerings: b-fee comes first (later name), a-fee conflicts.
		overlay("a-fee", 2, "+0.03", family("c5")),
		overlay("b-fee", 2, "+0.04", family("c5")),
		// Only pool batch.
		overlay("batch-only", 4, "0.01", v1alpha1.NodeSelectorRequirement{Key: apiv1.LabelNodePool, Operator: "In", Values: []string{"batch"}}),
		overlay("bad", 1, "-150%"),
	}, pools)
	s.Apply(pools)
	if v := s.Rejected["a-fee"]; v.Reason != v1alpha1.ReasonConflict || !strings.Contains(v.Message, "b-fee") || !strings.Contains(v.Message, "c5.") {
		t.Errorf("a-fee: %+v", v)
	}
	if v := s.Rejected["bad"]; v.Reason != v1alpha1.ReasonRuntimeValidation || !strings.Contains(v.Message, "spec.priceAdjustment") {
		t.Errorf("bad: %+v", v)
	}
	if len(s.Rejected) != 2 {
		t.Errorf("rejected %v", s.Rejected)
	}
	c5, _ := catalog.MustDefault().Get("c5.large")
	for _, c := range []struct {
		pool       int
		typ, zone  string
		want       float64
		overlayFor string
	}{
		{0, "m5.large", "us-east-1a", m5.OnDemandPrice * 0.8, "savings over edp"},
		{0, "c5.large", "us-east-1a", c5.OnDemandPrice + 0.01, "zone-a (weight 3) over b-fee (2)"},
		{0, "c5.xlarge", "us-east-1c", 0, "b-fee: no zone overlay in 1c"},
		{1, "m5.large", "us-east-1b", m5.OnDemandPrice * 0.8, "savings in both pools"},
		{1, "c5.large", "us-east-1c", 0.01, "batch-only (4) in its pool"},
		{1, "c5.large", "us-east-1b", 0.01, "batch-only (4) over zone-b (3)"},
	} {
		want := c.want
		if c.typ == "c5.xlarge" {
			it, _ := catalog.MustDefault().Get("c5.xlarge")
			want = it.OnDemandPrice + 0.04
		}
		if got := price(t, pools[c.pool], c.typ, c.zone); !near(got, want) {
			t.Errorf("%s %s in pool %d: %v, want %v (%s)", c.typ, c.zone, c.pool, got, want, c.overlayFor)
		}
	}
	if names := s.Active(); strings.Join(names, ",") != "savings,edp,batch-only,zone-b,zone-a,b-fee" {
		t.Errorf("active in order %v", names)
	}
}

func TestPriceAdjustmentArithmetic(t *testing.T) {
	for _, c := range []struct {
		change string
		want   float64
	}{{"-30%", 0.07}, {"+10%", 0.11}, {"-0.05", 0.05}, {"+0.5", 0.6}, {"-1", 0}, {"0.02", 0.02}, {"-100%", 0}, {"", 0.1}} {
		if got := Adjusted(0.1, c.change); !near(got, c.want) {
			t.Errorf("Adjusted(0.1, %q) = %v, want %v", c.change, got, c.want)
		}
	}
}

func TestCapacityAddsModelledExtendedResources(t *testing.T) {
	pools := []solver.NodePool{pool("web")}
	o := overlay("fuse", 5, "+0", family("m5"))
	o.Spec.PriceAdjustment = nil
	o.Spec.Capacity = corev1.ResourceList{"vpc.amazonaws.com/efa": resource.MustParse("2"), "smarter-devices/fuse": resource.MustParse("1")}
	hi := overlay("efa-hi", 9, "+0", v1alpha1.NodeSelectorRequirement{Key: apiv1.LabelInstanceType, Operator: "In", Values: []string{"m5.large"}})
	hi.Spec.PriceAdjustment = nil
	hi.Spec.Capacity = corev1.ResourceList{"vpc.amazonaws.com/efa": resource.MustParse("4")}
	s := Resolve([]*v1alpha1.NodeOverlay{o, hi}, pools)
	s.Apply(pools)
	for _, it := range pools[0].InstanceTypes {
		want := int64(0)
		switch {
		case it.Type.Name == "m5.large":
			want = 4 // the higher weight wins per resource
		case it.Type.Family == "m5":
			want = 2
		}
		if got := it.Shape.Allocatable[resources.EFA]; got != want {
			t.Errorf("%s efa %d, want %d", it.Type.Name, got, want)
		}
	}
	if len(s.Unmodelled) != 1 || !strings.Contains(s.Unmodelled[0], "smarter-devices/fuse") {
		t.Errorf("unmodelled %q", s.Unmodelled)
	}
}

func TestADiscountRaisesHowManyNodesAUSDLimitHolds(t *testing.T) {
	// m5.large on demand lists at 0.096 USD/hour: 0.3 holds three, or
	// six at the overlay's -50%.
	capped := func() []solver.NodePool {
		p := pool("web")
		p.CostLimit, p.HasCostLimit = 0.3, true
		return []solver.NodePool{p}
	}
	var pods []solver.Pod
	for i := 0; i < 8; i++ {
		pods = append(pods, solver.Pod{Namespace: "default", Name: "web-" + string(rune('a'+i)), NodeSelector: map[string]string{apiv1.LabelInstanceType: "m5.large"},
			Requests: resources.List{resources.CPU: 1500, resources.Memory: 1 << 30, resources.Pods: 1}})
	}
	count := func(pools []solver.NodePool) (int, int) {
		plan := solver.Solve(solver.Input{NodePools: pools, Pods: pods})
		return len(plan.NewNodeClaims), len(plan.Unschedulable)
	}
	if n, u := count(capped()); n != 3 || u != 5 {
		t.Errorf("at list prices: %d nodes, %d unschedulable; want 3 and 5", n, u)
	}
	pools := capped()
	Resolve([]*v1alpha1.NodeOverlay{overlay("savings-plan", 10, "-50%", family("m5"))}, pools).Apply(pools)
	if n, u := count(pools); n != 6 || u != 2 {
		t.Errorf("after a -50%% overlay: %d nodes, %d unschedulable; want 6 and 2", n, u)
	}
}
