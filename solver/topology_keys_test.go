package solver

import (
	"fmt"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spotAndOnDemand is basicPool with every offering also as spot, at 40%
// of the on-demand price.
func spotAndOnDemand() NodePool {
	np := basicPool()
	for i := range np.InstanceTypes {
		var offs []catalog.Offering
		for _, o := range np.InstanceTypes[i].Offerings {
			spot := o
			spot.CapacityType, spot.Price = apiv1.CapacityTypeSpot, o.Price*0.4
			offs = append(offs, o, spot)
		}
		np.InstanceTypes[i].Offerings = offs
	}
	return np
}

// claimValue is the one value of key over a claim's offerings ("" if several).
func claimValue(nc *NewNodeClaim, key string) string {
	v := ""
	for _, o := range nc.InstanceTypes {
		for _, of := range o.Offerings {
			var x string
			switch key {
			case apiv1.LabelCapacityType:
				x = of.CapacityType
			case apiv1.LabelArch:
				x = o.Type.Arch
			default:
				return ""
			}
			if v != "" && x != v {
				return ""
			}
			v = x
		}
	}
	return v
}

func podsPer(t *testing.T, plan *Plan, key string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		v := claimValue(nc, key)
		if v == "" {
			t.Fatalf("claim %d is not pinned to one %s", i, key)
		}
		out[v] += len(nc.Pods)
	}
	return out
}

func spreadOn(key string, skew int32) func(p *Pod) {
	return func(p *Pod) {
		p.TopologySpread = append(p.TopologySpread, corev1.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")})
	}
}

// Karpenter's "should balance pods across capacity-types": a spread over
// karpenter.sh/capacity-type puts half the pods on on-demand nodes although
// spot is cheaper.
func TestTopologyCapacityTypeSpread(t *testing.T) {
	in := Input{Pods: each(labelled("web", 4, 1500, 512, "web"), spreadOn(apiv1.LabelCapacityType, 1)), NodePools: []NodePool{spotAndOnDemand()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := podsPer(t, &plan, apiv1.LabelCapacityType); got["spot"] != 2 || got["on-demand"] != 2 || len(plan.Unschedulable) != 0 {
		t.Fatalf("capacity-type spread: %v (%d unschedulable), want 2 spot and 2 on-demand", got, len(plan.Unschedulable))
	}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		if r := reqOf(nc, apiv1.LabelCapacityType); r != "In "+claimValue(nc, apiv1.LabelCapacityType) {
			t.Errorf("claim %d requirement %q", i, r)
		}
	}
	// Without the spread the four share one node, of either capacity type.
	for i := range in.Pods {
		in.Pods[i].TopologySpread = nil
	}
	plan = Solve(in)
	if len(plan.NewNodeClaims) != 1 || claimValue(&plan.NewNodeClaims[0], apiv1.LabelCapacityType) != "" {
		t.Fatalf("unconstrained: %d claims, want one not pinned to a capacity type", len(plan.NewNodeClaims))
	}
	// Existing pods count: 3 already on an on-demand node, so new ones go to spot
	// until the skew allows on-demand again: 3 on-demand + 0 new, 4 new on spot
	// gives skew 1.
	in = Input{Pods: each(labelled("web", 4, 1500, 512, "web"), spreadOn(apiv1.LabelCapacityType, 1)), NodePools: []NodePool{spotAndOnDemand()},
		ExistingNodes: []Node{{Name: "od-1", Labels: map[string]string{apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1a"}, NodePool: "p"}}}
	for i := 0; i < 3; i++ {
		in.ExistingPods = append(in.ExistingPods, ExistingPod{Pod: Pod{Namespace: "default", Name: fmt.Sprintf("old-%d", i), Labels: map[string]string{"app": "web"}}, Node: "od-1", Zone: "us-east-1a"})
	}
	plan = Solve(in)
	if got := podsPer(t, &plan, apiv1.LabelCapacityType); got["spot"] != 4 || got["on-demand"] != 0 {
		t.Fatalf("with 3 on on-demand: new pods %v, want 4 on spot", got)
	}
}

func reqOf(nc *NewNodeClaim, key string) string {
	for _, r := range nc.Requirements {
		if r.Key == key {
			return r.Operator + " " + strings.Join(r.Values, ",")
		}
	}
	return ""
}

// Zone and capacity type together: each new node is pinned in both, and
// both spreads hold.
func TestTopologyZoneAndCapacityTypeSpread(t *testing.T) {
	ps := each(labelled("web", 6, 1500, 512, "web"), func(p *Pod) {
		spreadOn(apiv1.LabelZone, 1)(p)
		spreadOn(apiv1.LabelCapacityType, 1)(p)
	})
	in := Input{Pods: ps, NodePools: []NodePool{spotAndOnDemand()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	ct, zones := podsPer(t, &plan, apiv1.LabelCapacityType), podsPerZone(t, &plan)
	if ct["spot"] != 3 || ct["on-demand"] != 3 || zones["us-east-1a"] != 2 || zones["us-east-1b"] != 2 || zones["us-east-1c"] != 2 {
		t.Fatalf("capacity types %v zones %v, want 3/3 and 2 per zone", ct, zones)
	}
}

// A spread over a label the NodePools' templates set splits pods across
// the pools, the dearer one included.
func TestTopologyTemplateLabelSpread(t *testing.T) {
	a := synthPool("team-a", 10, synth{name: "a2", cpu: 2000, memMiB: 4096, price: 0.1})
	a.Labels = map[string]string{"example.com/rack": "r1"}
	b := synthPool("team-b", 0, synth{name: "b2", cpu: 2000, memMiB: 4096, price: 0.3})
	b.Labels = map[string]string{"example.com/rack": "r2"}
	in := Input{Pods: each(labelled("web", 4, 1500, 512, "web"), spreadOn("example.com/rack", 1)), NodePools: []NodePool{a, b}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	per := map[string]int{}
	for _, nc := range plan.NewNodeClaims {
		per[nc.NodePool] += len(nc.Pods)
	}
	if per["team-a"] != 2 || per["team-b"] != 2 {
		t.Fatalf("rack spread: %v, want 2 per pool", per)
	}
	// A pool whose nodes do not carry the key cannot take the pod.
	b.Labels = nil
	in.NodePools = []NodePool{a, b}
	plan = Solve(in)
	per = map[string]int{}
	for _, nc := range plan.NewNodeClaims {
		per[nc.NodePool] += len(nc.Pods)
	}
	if per["team-b"] != 0 || per["team-a"] != 4 {
		t.Fatalf("pool without the label: %v, want all on team-a", per)
	}
}

// Required anti-affinity on kubernetes.io/arch: one pod per architecture,
// the third has nowhere to go.
func TestTopologyArchAntiAffinity(t *testing.T) {
	np := synthPool("p", 0, synth{name: "x2", cpu: 2000, memMiB: 4096, price: 0.1}, synth{name: "g2", cpu: 2000, memMiB: 4096, price: 0.08, arch: "arm64"})
	ps := each(labelled("web", 3, 500, 512, "web"), func(p *Pod) {
		p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelArch, LabelSelector: sel("web")}}}
	})
	in := Input{Pods: ps, NodePools: []NodePool{np}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	got := podsPer(t, &plan, apiv1.LabelArch)
	if got["amd64"] != 1 || got["arm64"] != 1 || len(plan.Unschedulable) != 1 {
		t.Fatalf("arch anti-affinity: %v, %d unschedulable; want one per arch and 1 unschedulable", got, len(plan.Unschedulable))
	}
	if !strings.Contains(plan.Unschedulable[0].Reason, "anti-affinity on kubernetes.io/arch") {
		t.Errorf("reason %q", plan.Unschedulable[0].Reason)
	}
}

// Required affinity on the capacity type follows an existing pod to spot.
func TestTopologyCapacityTypeAffinity(t *testing.T) {
	in := Input{NodePools: []NodePool{spotAndOnDemand()},
		ExistingNodes: []Node{{Name: "od-1", Labels: map[string]string{apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1a"}, NodePool: "p"}},
		ExistingPods:  []ExistingPod{{Pod: Pod{Namespace: "default", Name: "db", Labels: map[string]string{"app": "db"}}, Node: "od-1", Zone: "us-east-1a"}},
		Pods: each(pods("web", 2, 1500, 512), func(p *Pod) {
			p.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelCapacityType, LabelSelector: sel("db")}}}
		})}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := podsPer(t, &plan, apiv1.LabelCapacityType); got["on-demand"] != 2 {
		t.Fatalf("affinity to an on-demand pod: %v, want both on on-demand", got)
	}
}

// nodeTaintsPolicy Honor leaves a tainted node's zone out of the skew;
// the default (Ignore) counts it, and its empty zone blocks the others.
func TestTopologyNodeTaintsPolicy(t *testing.T) {
	np := basicPool()
	for i := range np.InstanceTypes {
		np.InstanceTypes[i].Offerings = np.InstanceTypes[i].Offerings[:2] // zones a and b
	}
	full := resources.List{}
	in := Input{NodePools: []NodePool{np},
		ExistingNodes: []Node{
			{Name: "a1", Labels: map[string]string{apiv1.LabelZone: "us-east-1a"}, Available: full},
			{Name: "b1", Labels: map[string]string{apiv1.LabelZone: "us-east-1b"}, Available: full},
			{Name: "c1", Labels: map[string]string{apiv1.LabelZone: "us-east-1c"}, Available: full,
				Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}},
		},
		ExistingPods: []ExistingPod{
			{Pod: Pod{Namespace: "default", Name: "w-a", Labels: map[string]string{"app": "web"}}, Node: "a1", Zone: "us-east-1a"},
			{Pod: Pod{Namespace: "default", Name: "w-b", Labels: map[string]string{"app": "web"}}, Node: "b1", Zone: "us-east-1b"},
		},
		Pods: each(labelled("web", 1, 500, 512, "web"), spreadOn(apiv1.LabelZone, 1))}
	plan := Solve(in)
	if len(plan.Unschedulable) != 1 {
		t.Fatalf("nodeTaintsPolicy Ignore: %d unschedulable, want 1 (zone c, empty, is the minimum)", len(plan.Unschedulable))
	}
	honor := corev1.NodeInclusionPolicyHonor
	in.Pods[0].TopologySpread[0].NodeTaintsPolicy = &honor
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 || len(plan.NewNodeClaims) != 1 {
		t.Fatalf("nodeTaintsPolicy Honor: %d unschedulable, %d claims; want the pod on a new node in a or b", len(plan.Unschedulable), len(plan.NewNodeClaims))
	}
}

// nodeAffinityPolicy Ignore counts the zones the pod's own node affinity
// excludes; the default (Honor) does not.
func TestTopologyNodeAffinityPolicy(t *testing.T) {
	in := Input{NodePools: []NodePool{basicPool()},
		ExistingPods: []ExistingPod{
			{Pod: Pod{Namespace: "default", Name: "w-a", Labels: map[string]string{"app": "web"}}, Node: "a1", Zone: "us-east-1a"},
			{Pod: Pod{Namespace: "default", Name: "w-b", Labels: map[string]string{"app": "web"}}, Node: "b1", Zone: "us-east-1b"},
		},
		Pods: each(labelled("web", 1, 500, 512, "web"), func(p *Pod) {
			spreadOn(apiv1.LabelZone, 1)(p)
			p.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{"us-east-1a", "us-east-1b"}}}}
		})}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("nodeAffinityPolicy Honor: unschedulable %v", plan.Unschedulable)
	}
	ignore := corev1.NodeInclusionPolicyIgnore
	in.Pods[0].TopologySpread[0].NodeAffinityPolicy = &ignore
	plan = Solve(in)
	if len(plan.Unschedulable) != 1 {
		t.Fatalf("nodeAffinityPolicy Ignore: %d unschedulable, want 1 (zone c counts, with 0)", len(plan.Unschedulable))
	}
}

// minDomains counts the domains existing nodes occupy: with zone b's node
// counted there are 2 domains, the minimum is 1 and a second pod fits in
// zone a.
func TestTopologyMinDomainsCountsExistingNodes(t *testing.T) {
	np := basicPool()
	for i := range np.InstanceTypes {
		np.InstanceTypes[i].Offerings = np.InstanceTypes[i].Offerings[:1] // zone a only
	}
	md := int32(2)
	in := Input{NodePools: []NodePool{np},
		ExistingNodes: []Node{{Name: "b1", Labels: map[string]string{apiv1.LabelZone: "us-east-1b"}}},
		ExistingPods: []ExistingPod{
			{Pod: Pod{Namespace: "default", Name: "w-a", Labels: map[string]string{"app": "web"}}, Node: "a1", Zone: "us-east-1a"},
			{Pod: Pod{Namespace: "default", Name: "w-b", Labels: map[string]string{"app": "web"}}, Node: "b1", Zone: "us-east-1b"},
		},
		Pods: each(labelled("web", 1, 500, 512, "web"), func(p *Pod) {
			spreadOn(apiv1.LabelZone, 1)(p)
			p.TopologySpread[0].MinDomains = &md
		})}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 || zoneOfClaim(&plan.NewNodeClaims[0]) != "us-east-1a" {
		t.Fatalf("minDomains 2 with zone b occupied: %+v unschedulable, want the pod in zone a", plan.Unschedulable)
	}
}

// More distinct topology keys than tracked: the pods naming the extra ones
// are refused with the reason, the others planned.
func TestTopologyTooManyKeys(t *testing.T) {
	var ps []Pod
	np := basicPool()
	np.Labels = map[string]string{}
	for i := 0; i < maxKeys+1; i++ {
		key := fmt.Sprintf("example.com/k%d", i)
		np.Labels[key] = "v"
		p := labelled(fmt.Sprintf("w%d", i), 1, 500, 512, "web")[0]
		spreadOn(key, 1)(&p)
		ps = append(ps, p)
	}
	in := Input{Pods: ps, NodePools: []NodePool{np}}
	plan := Solve(in)
	if len(plan.Unschedulable) != 2 {
		t.Fatalf("%d unschedulable, want the 2 pods past the %d keys", len(plan.Unschedulable), maxKeys-1)
	}
	if r := plan.Unschedulable[0].Reason; !strings.Contains(r, "more than 8 distinct topology keys") {
		t.Errorf("reason %q", r)
	}
}

// A namespaceSelector selects namespaces by their labels (the union with
// the term's namespaces); an empty one selects all; a namespace not in
// Input.NamespaceLabels still carries kubernetes.io/metadata.name.
func TestTopologyNamespaceSelector(t *testing.T) {
	antiIn := func(ns *metav1.LabelSelector) func(p *Pod) {
		return func(p *Pod) {
			p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: apiv1.LabelZone, LabelSelector: sel("db"), NamespaceSelector: ns}}}
			p.RequiredAffinity = [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{"us-east-1a", "us-east-1b"}}}}
		}
	}
	db := func(ns, zone string) ExistingPod {
		return ExistingPod{Pod: Pod{Namespace: ns, Name: "db", Labels: map[string]string{"app": "db"}}, Node: "n-" + zone, Zone: zone}
	}
	in := Input{NodePools: []NodePool{basicPool()},
		NamespaceLabels: map[string]map[string]string{"team-a": {"team": "a"}, "team-b": {"team": "b"}},
		ExistingPods:    []ExistingPod{db("team-a", "us-east-1a"), db("team-b", "us-east-1b")}}
	for _, c := range []struct {
		name string
		ns   *metav1.LabelSelector
		zone string // "" unschedulable
	}{
		{"team a only", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, "us-east-1b"},
		{"team b by metadata.name", &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "team-b"}}, "us-east-1a"},
		{"every namespace", &metav1.LabelSelector{}, ""},
	} {
		in.Pods = each(pods("web", 1, 500, 512), antiIn(c.ns))
		plan := Solve(in)
		got := ""
		if len(plan.NewNodeClaims) == 1 {
			got = zoneOfClaim(&plan.NewNodeClaims[0])
		}
		if got != c.zone {
			t.Errorf("%s: new node in %q, want %q (unschedulable: %v)", c.name, got, c.zone, plan.Unschedulable)
		}
	}
}
