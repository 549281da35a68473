package solver

import (
	"reflect"
	"strconv"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const teamKey = "company.example.io/team"

// teamPool is basicPool with team Exists, the requirement of Karpenter's
// "Exists operator" workload segregation.
func teamPool() NodePool {
	np := basicPool()
	np.Requirements = append(np.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: teamKey, Operator: apiv1.OpExists})
	return np
}

func onTeam(team string) func(p *Pod) {
	return func(p *Pod) { p.NodeSelector = map[string]string{teamKey: team} }
}

// reqsOn is the claim's requirements on key.
func reqsOn(nc *NewNodeClaim, key string) []req {
	var out []req
	for _, r := range nc.Requirements {
		if r.Key == key {
			out = append(out, r)
		}
	}
	return out
}

// Karpenter's Exists on a custom key: pods selecting a value get claims
// labelled with it (their requirement narrowed to it); a claim of pods
// naming none is labelled with a generated integer, its requirement left at
// Exists, the same for the same input.
func TestFreeKeyExistsTakesThePodsValueElseAnInteger(t *testing.T) {
	ps := append(each(pods("a", 2, 200, 256), onTeam("alpha")), each(pods("b", 1, 200, 256), onTeam("beta"))...)
	in := Input{Pods: ps, NodePools: []NodePool{teamPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	for _, c := range []struct{ pod, team string }{{"default/a-aa", "alpha"}, {"default/a-ab", "alpha"}, {"default/b-aa", "beta"}} {
		nc := claimOf(&plan, c.pod)
		want := []req{{Key: teamKey, Operator: apiv1.OpIn, Values: []string{c.team}}}
		if nc == nil || nc.Labels[teamKey] != c.team || !reflect.DeepEqual(reqsOn(nc, teamKey), want) {
			t.Fatalf("pod %s on team %s: claim %+v", c.pod, c.team, nc)
		}
	}
	in = Input{Pods: pods("plain", 2, 200, 256), NodePools: []NodePool{teamPool()}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	nc := claimOf(&plan, "default/plain-aa")
	if nc == nil || len(plan.NewNodeClaims) != 1 {
		t.Fatalf("pods naming no team: claims %+v, want one", plan.NewNodeClaims)
	}
	if _, err := strconv.ParseInt(nc.Labels[teamKey], 10, 64); err != nil {
		t.Errorf("generated %s=%q is not an integer", teamKey, nc.Labels[teamKey])
	}
	if got := reqsOn(nc, teamKey); len(got) != 1 || got[0].Operator != apiv1.OpExists {
		t.Errorf("generated claim's requirements on %s = %v, want the pool's Exists", teamKey, got)
	}
	again := Solve(in)
	if v := claimOf(&again, "default/plain-aa").Labels[teamKey]; v != nc.Labels[teamKey] {
		t.Errorf("generated value %q then %q for the same input", nc.Labels[teamKey], v)
	}
}

// A generated value keeps within Gt/Lt/Gte/Lte and out of NotIn; a pod's
// DoesNotExist leaves the key off the claim.
func TestGeneratedValueBoundsAndDoesNotExist(t *testing.T) {
	reqs := []req{{Key: teamKey, Operator: apiv1.OpGte, Values: []string{"10"}}, {Key: teamKey, Operator: apiv1.OpLte, Values: []string{"12"}},
		{Key: teamKey, Operator: apiv1.OpNotIn, Values: []string{"10", "11"}}}
	for seed := uint64(0); seed < 6; seed++ {
		if v := generatedValue(reqs, seed); v != "12" {
			t.Errorf("seed %d: generated %q, want 12 (the one value the bounds and NotIn leave)", seed, v)
		}
	}
	if v := generatedValue([]req{{Key: teamKey, Operator: apiv1.OpGt, Values: []string{"5"}}, {Key: teamKey, Operator: apiv1.OpLt, Values: []string{"6"}}}, 7); v != "" {
		t.Errorf("Gt 5, Lt 6: generated %q, want none", v)
	}
	np := basicPool()
	np.Requirements = append(np.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: teamKey, Operator: apiv1.OpNotIn, Values: []string{"x"}})
	p := pod("none", 200, 256)
	p.RequiredAffinity = [][]req{{{Key: teamKey, Operator: apiv1.OpDoesNotExist}}}
	plan := Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{np}})
	if nc := claimOf(&plan, "default/none"); nc == nil || nc.Labels[teamKey] != "" {
		t.Errorf("pod with DoesNotExist: claim %+v, want one without %s", nc, teamKey)
	}
}

// Required anti-affinity on a key with three values: one pod per value,
// the fourth pod nowhere.
func TestFreeKeyAntiAffinityOnePodPerCell(t *testing.T) {
	anti := func(p *Pod) {
		p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: cellKey, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}
	}
	in := Input{Pods: each(labelled("db", 4, 200, 256, "db"), anti), NodePools: []NodePool{cellPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got, want := cells(&plan), []string{"c1", "c2", "c3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claims' cells = %v, want %v", got, want)
	}
	if len(plan.Unschedulable) != 1 {
		t.Errorf("unschedulable %v, want the fourth pod", plan.Unschedulable)
	}
}

// A pool allowing one value: every claim carries it, and a spread over the
// key (one domain) packs as without it; a pod selecting c2 of three gets c2.
func TestFreeKeySingleValueAndSelector(t *testing.T) {
	np := basicPool()
	np.Requirements = append(np.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: cellKey, Operator: apiv1.OpIn, Values: []string{"c1"}})
	in := Input{Pods: each(labelled("web", 6, 200, 256, "web"), spreadOn(cellKey, 1)), NodePools: []NodePool{np}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 || len(plan.NewNodeClaims) != 1 || cellOf(&plan.NewNodeClaims[0]) != "c1" ||
		plan.NewNodeClaims[0].Labels[cellKey] != "c1" || len(plan.NewNodeClaims[0].Pods) != 6 {
		t.Fatalf("single value: claims in %v, unschedulable %v; want one claim in c1 with the 6 pods", cells(&plan), plan.Unschedulable)
	}
	picky := pod("picky", 200, 256)
	picky.NodeSelector = map[string]string{cellKey: "c2"}
	plan = Solve(Input{Pods: []Pod{picky}, NodePools: []NodePool{cellPool()}})
	if nc := claimOf(&plan, "default/picky"); nc == nil || cellOf(nc) != "c2" || nc.Labels[cellKey] != "c2" {
		t.Errorf("pod selecting c2 got claim %+v, want one in c2", nc)
	}
}

// A spread over a key the pool only requires to exist: the pool adds no
// domain, but a value an existing node carries is one, and the new claim is
// pinned to it (Karpenter's topology picks among the domains the claim's
// Exists requirement has).
func TestFreeKeyExistsJoinsAnExistingDomain(t *testing.T) {
	spread := func(p *Pod) {
		p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: teamKey, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")}}
	}
	in := Input{Pods: each(labelled("web", 1, 200, 256, "web"), spread), NodePools: []NodePool{teamPool()},
		ExistingNodes: []Node{{Name: "n1", Labels: map[string]string{teamKey: "alpha", apiv1.LabelZone: "us-east-1a"}, NodePool: "p"}},
		ExistingPods:  []ExistingPod{{Pod: Pod{Namespace: "default", Name: "old", Labels: map[string]string{"app": "web"}}, Node: "n1", Zone: "us-east-1a"}}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	nc := claimOf(&plan, "default/web-aa")
	want := []req{{Key: teamKey, Operator: apiv1.OpIn, Values: []string{"alpha"}}}
	if nc == nil || nc.Labels[teamKey] != "alpha" || !reflect.DeepEqual(reqsOn(nc, teamKey), want) {
		t.Fatalf("claim %+v (unschedulable %v), want one pinned to alpha", nc, plan.Unschedulable)
	}
}
