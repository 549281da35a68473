package whatif

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func pool(name string, families ...string) *apiv1.NodePool {
	p := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	p.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: families},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"on-demand"}},
	}
	p.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	p.Spec.Disruption.ConsolidateAfter = "1m"
	return p
}

// claim is an initialized NodeClaim of the pool launched as typ (its
// family label), stamped with the pool's hash, with its Node and pods
// (reschedulable, controlled).
func claim(i int, p *apiv1.NodePool, typ string, price float64, pods int) disruption.Claim {
	family := strings.SplitN(typ, ".", 2)[0]
	name := fmt.Sprintf("ip-10-0-0-%d.ec2.internal", 10+i)
	labels := map[string]string{apiv1.LabelNodePool: p.Name, apiv1.LabelInstanceFamily: family, apiv1.LabelInstanceType: typ,
		apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1a"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", p.Name, i), Labels: labels,
		CreationTimestamp: metav1.NewTime(t0.Add(-2 * time.Hour)),
		Annotations: map[string]string{disruption.AnnotationNodePoolHash: disruption.NodePoolHash(p),
			disruption.AnnotationNodePoolHashVersion: disruption.NodePoolHashVersion}}}
	nc.Status.NodeName, nc.Status.ProviderID = name, "aws:///us-east-1a/i-"+fmt.Sprint(i)
	nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}
	c := disruption.Claim{Claim: nc, Node: node, Pool: p, Price: price}
	for j := 0; j < pods; j++ {
		c.Pods = append(c.Pods, disruption.Pod{Name: fmt.Sprintf("default/app-%d-%d", i, j), Active: true, Reschedulable: true, Controlled: true})
	}
	return c
}

func names(ds []Drifted) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Node.Node)
	}
	return out
}

// Narrowing a pool's families drifts exactly the nodes outside the new
// families (RequirementsDrifted), a blocked one is listed with why, and
// an unchanged pool drifts nothing.
func TestNarrowedFamiliesDriftExactlyTheNodesOutsideThem(t *testing.T) {
	gp, other := pool("general-purpose", "c7i", "m7i", "r7i"), pool("other", "m7i")
	claims := []disruption.Claim{
		claim(0, gp, "c7i.large", 0.0893, 2), claim(1, gp, "m7i.large", 0.1008, 1), claim(2, gp, "r7i.large", 0.1323, 1),
		claim(3, gp, "m7i.xlarge", 0.2016, 3), claim(4, gp, "c7i.xlarge", 0.1785, 1), claim(5, other, "m7i.large", 0.1008, 1),
	}
	claims[3].Pods[0].DoNotDisrupt = true
	st := State{Now: t0, Claims: claims, Pools: map[string]disruption.PoolNodes{"general-purpose": {Nodes: 5}, "other": {Nodes: 1}}}
	if ds := DriftedBy(claims, Retarget(claims, Change{}, nil)); len(ds) != 0 {
		t.Fatalf("no change drifted %v", names(ds))
	}
	narrow := pool("general-purpose", "c7i")
	ch := Change{NodePools: []*apiv1.NodePool{narrow}}
	after := Retarget(st.Claims, ch, nil)
	ds := DriftedBy(st.Claims, after)
	want := []string{"ip-10-0-0-11.ec2.internal", "ip-10-0-0-12.ec2.internal", "ip-10-0-0-13.ec2.internal"}
	if got := names(ds); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("drifted %v, want the m7i and r7i nodes %v", got, want)
	}
	for _, d := range ds {
		if d.Reason != disruption.ReasonRequirementsDrifted || d.AlreadyDrifted || d.NodePool != "general-purpose" {
			t.Errorf("%s: %+v, want RequirementsDrifted, not drifted already", d.Node.Node, d)
		}
		if !strings.Contains(d.Message, "karpenter.k8s.aws/instance-family In [c7i]") {
			t.Errorf("%s: message %q", d.Node.Node, d.Message)
		}
	}
	if len(ds[0].Blocked) != 0 || len(ds[2].Blocked) != 1 || !strings.Contains(ds[2].Blocked[0], "do-not-disrupt") {
		t.Errorf("blocked: %q %q, want only the do-not-disrupt node's", ds[0].Blocked, ds[2].Blocked)
	}
	if ds[2].Pods != 3 || ds[0].PriceUSDHour != 0.1008 || ds[0].InstanceType != "m7i.large" {
		t.Errorf("node fields: %+v", ds[0])
	}
	// The cluster's objects are untouched.
	if claims[1].Pool != gp {
		t.Error("Retarget changed the input claims")
	}
}

// The order under the budgets: one node per pass, the next pass after the
// previous DrainAndReplace (launch when it has pods, drain), budgets read
// at each pass's time, a budget that never opens holds the rest.
func TestOrderFollowsTheBudgetsAndTheirSchedules(t *testing.T) {
	tm := Timing{PassInterval: 10 * time.Second, Launch: 90 * time.Second, Drain: time.Minute, Horizon: 24 * time.Hour}
	drifted := func(p *apiv1.NodePool, n int) []disruption.Claim {
		var cs []disruption.Claim
		for i := 0; i < n; i++ {
			pods := 1
			if i == 1 {
				pods = 0 // empty: nothing to launch
			}
			c := claim(i, p, "m7i.large", 0.1008, pods)
			c.Claim.Annotations[disruption.AnnotationNodePoolHash] = "before-the-change"
			cs = append(cs, c)
		}
		return cs
	}
	p := pool("gp", "m7i")
	steps, held, total := Order(drifted(p, 3), map[string]disruption.PoolNodes{"gp": {Nodes: 3}}, t0, tm)
	type se struct{ start, end time.Duration }
	want := []se{{10 * time.Second, 160 * time.Second}, {170 * time.Second, 230 * time.Second}, {240 * time.Second, 390 * time.Second}}
	if len(steps) != 3 || len(held) != 0 || total != 390*time.Second {
		t.Fatalf("steps %+v held %+v total %s, want 3 steps in 390s", steps, held, total)
	}
	for i, s := range steps {
		if s.Node != fmt.Sprintf("ip-10-0-0-%d.ec2.internal", 10+i) || s.Start != want[i].start || s.End != want[i].end || s.Waited != 0 {
			t.Errorf("step %d: %+v, want %s from %s to %s", i, s, s.Node, want[i].start, want[i].end)
		}
	}

	// Drifted budget 0 from 12:00 for an hour every day: the first pass
	// allowed is at 13:00, an hour after the change.
	sched, hour := "0 12 * * *", metav1.Duration{Duration: time.Hour}
	p = pool("gp", "m7i")
	p.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "0", Reasons: []string{disruption.BudgetReasonDrifted}, Schedule: &sched, Duration: &hour}, {Nodes: "1"}}
	steps, held, total = Order(drifted(p, 2), map[string]disruption.PoolNodes{"gp": {Nodes: 2}}, t0, tm)
	if len(steps) != 2 || len(held) != 0 || steps[0].Start != time.Hour || steps[0].Waited != time.Hour-10*time.Second ||
		steps[1].Start != time.Hour+160*time.Second || total != time.Hour+220*time.Second {
		t.Fatalf("scheduled budget: steps %+v held %+v total %s", steps, held, total)
	}

	// A Drifted budget of 0 without a schedule holds every drifted node.
	p = pool("gp", "m7i")
	p.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "0", Reasons: []string{disruption.BudgetReasonDrifted}}}
	steps, held, _ = Order(drifted(p, 2), map[string]disruption.PoolNodes{"gp": {Nodes: 2}}, t0, tm)
	if len(steps) != 0 || len(held) != 2 || !strings.Contains(held[0].Why, "Drifted budget allows 0 node(s) now") {
		t.Fatalf("budget 0: steps %+v held %+v", steps, held)
	}
}

// The replacement plan: the drifted nodes' pods are planned on the nodes
// that stay or new nodes of the changed pool; cost before is the nodes'
// sum, after the nodes that stay plus the new nodes; a pod no type of
// the new pool holds is unschedulable, naming the node it leaves.
func TestAnalyzeCostsBeforeAndAfter(t *testing.T) {
	cat, err := catalog.Default()
	if err != nil {
		t.Fatal(err)
	}
	gp := pool("general-purpose", "c7i", "m7i")
	narrow := pool("general-purpose", "c7i")
	claims := []disruption.Claim{claim(0, gp, "c7i.xlarge", 0.1785, 1), claim(1, gp, "m7i.xlarge", 0.2016, 2)}
	price := func(typ string) float64 {
		it, ok := cat.Get(typ)
		if !ok {
			t.Fatalf("%s not in the catalog", typ)
		}
		return it.OnDemandPrice
	}
	claims[0].Price, claims[1].Price = price("c7i.xlarge"), price("m7i.xlarge")
	pod := func(name string, cpu string) solver.Pod {
		return solver.PodFromK8s(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}})
	}
	free := func(cpu int64) resources.List {
		var l resources.List
		l[resources.CPU], l[resources.Memory], l[resources.Pods], l[resources.EBSVolumes] = cpu, 4<<30, 50, 25
		return l
	}
	node := func(c disruption.Claim, avail resources.List) solver.Node {
		return solver.Node{Name: c.Node.Name, Labels: c.Node.Labels, Available: avail, NodePool: "general-purpose", Price: c.Price}
	}
	// A managed node group's node: not Joinery's cost before or after.
	system := solver.Node{Name: "system-0", Available: free(0), Price: price("m5.large")}
	base := solver.Input{
		ExistingNodes: []solver.Node{node(claims[0], free(500)), node(claims[1], free(0)), system},
		ExistingPods: []solver.ExistingPod{{Pod: pod("a", "3"), Node: claims[0].Node.Name}, {Pod: pod("b", "1500m"), Node: claims[1].Node.Name},
			{Pod: pod("c", "2"), Node: claims[1].Node.Name}, {Pod: pod("huge", "500"), Node: claims[1].Node.Name}},
		Budget: -1,
	}
	before, after := base, base
	before.NodePools = []solver.NodePool{solver.NodePoolFromAPI(gp, nil, cat, []string{"us-east-1a"}, nil)}
	after.NodePools = []solver.NodePool{solver.NodePoolFromAPI(narrow, nil, cat, []string{"us-east-1a"}, nil)}
	st := State{Now: t0, Claims: claims, Before: before, After: after, Pools: map[string]disruption.PoolNodes{"general-purpose": {Nodes: 2}}}
	r := Analyze(st, Change{NodePools: []*apiv1.NodePool{narrow}}, DefaultTiming, -1)

	if len(r.Drifted) != 1 || r.Drifted[0].Node.Node != claims[1].Node.Name || len(r.Order) != 1 {
		t.Fatalf("drifted %v order %+v, want only the m7i node", names(r.Drifted), r.Order)
	}
	wantBefore := price("c7i.xlarge") + price("m7i.xlarge")
	if math.Abs(r.BeforeUSDHour-wantBefore) > 1e-9 {
		t.Errorf("before %.4f, want %.4f", r.BeforeUSDHour, wantBefore)
	}
	if len(r.Replacements) != 1 || !strings.HasPrefix(r.Replacements[0].InstanceType, "c7i.") || len(r.Replacements[0].Pods) != 2 {
		t.Fatalf("replacements %+v, want one c7i node for b and c", r.Replacements)
	}
	// b (1.5 CPU) and c (2 CPU) do not fit the c7i node's 0.5 CPU left:
	// one new node holds both; 3.5 CPU and 2 GiB: a c7i.xlarge (4 vCPU).
	if r.Replacements[0].InstanceType != "c7i.xlarge" || r.Placed != 0 {
		t.Errorf("replacement %s, %d placed; want c7i.xlarge, 0", r.Replacements[0].InstanceType, r.Placed)
	}
	wantAfter := price("c7i.xlarge") + r.Replacements[0].PriceUSDHour
	if math.Abs(r.AfterUSDHour-wantAfter) > 1e-9 || math.Abs(r.Replacements[0].PriceUSDHour-price("c7i.xlarge")) > 1e-9 {
		t.Errorf("after %.4f (replacement %.4f), want %.4f", r.AfterUSDHour, r.Replacements[0].PriceUSDHour, wantAfter)
	}
	if len(r.Unschedulable) != 1 || r.Unschedulable[0].Pod != "default/huge" || r.Unschedulable[0].From != claims[1].Node.Name || r.Unschedulable[0].Reason == "" {
		t.Errorf("unschedulable %+v, want default/huge from %s with a reason", r.Unschedulable, claims[1].Node.Name)
	}

	// Rebalance: every pod re-planned over the cluster's pools, the bound below the plan.
	rb := RebalancePlan(before, -1)
	if math.Abs(rb.NowUSDHour-wantBefore-system.Price) > 1e-9 || rb.Kept != 1 || rb.PlanUSDHour <= 0 || rb.LowerBoundUSDHour <= 0 ||
		rb.LowerBoundUSDHour > rb.PlanUSDHour+1e-9 || len(rb.Unschedulable) != 1 {
		t.Errorf("rebalance %+v", rb)
	}
}

// An EC2NodeClass change alone drifts the nodes of every pool naming the
// class (its static hash), keeping the cluster class's resolved status.
func TestClassChangeDriftsItsNodes(t *testing.T) {
	ud := "echo one"
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{UserData: &ud}}
	cls.Status.Subnets = []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}}
	gp, other := pool("general-purpose", "m7i"), pool("other", "m7i")
	other.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "special"}
	claims := []disruption.Claim{claim(0, gp, "m7i.large", 0.1, 1), claim(1, other, "m7i.large", 0.1, 1)}
	claims[0].Class = cls
	claims[0].Claim.Annotations[disruption.AnnotationNodeClassHash] = disruption.NodeClassHash(cls)
	ud2 := "echo two"
	changed := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{UserData: &ud2}}
	after := Retarget(claims, Change{NodeClasses: []*apiv1.EC2NodeClass{changed}}, map[string]*apiv1.EC2NodeClass{"default": cls})
	if after[0].Class.Status.Subnets[0].ID != "subnet-a" || *after[0].Class.Spec.UserData != ud2 || after[1].Class != nil {
		t.Fatalf("retargeted classes %+v %+v", after[0].Class, after[1].Class)
	}
	ds := DriftedBy(claims, after)
	if len(ds) != 1 || ds[0].Node.Node != claims[0].Node.Name || ds[0].Reason != disruption.ReasonNodeClassDrift {
		t.Fatalf("drifted %+v, want the default class's node, NodeClassDrift", ds)
	}
}
