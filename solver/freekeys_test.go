package solver

import (
	"reflect"
	"sort"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const cellKey = "topology.example.io/cell"

// cellPool is basicPool whose requirement allows three cells of a key
// nothing else sets.
func cellPool() NodePool {
	np := basicPool()
	np.Requirements = append(np.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: cellKey, Operator: apiv1.OpIn, Values: []string{"c1", "c2", "c3"}})
	return np
}

// cellOf is the one value a new claim's requirements give the key ("" when
// they do not narrow it to one).
func cellOf(nc *NewNodeClaim) string {
	v := ""
	for _, r := range nc.Requirements {
		if r.Key != cellKey {
			continue
		}
		if v != "" || r.Operator != apiv1.OpIn || len(r.Values) != 1 {
			return ""
		}
		v = r.Values[0]
	}
	return v
}

func cells(plan *Plan) []string {
	var out []string
	for i := range plan.NewNodeClaims {
		out = append(out, cellOf(&plan.NewNodeClaims[i]))
	}
	sort.Strings(out)
	return out
}

// Karpenter's domains from NodePool requirements: a spread over a key the
// pool allows three values of puts the pods on three NodeClaims, one value
// each, where they would all fit on one node.
func TestFreeKeySpreadGivesEachClaimOneValue(t *testing.T) {
	in := Input{Pods: each(labelled("web", 6, 200, 256, "web"), spreadOn(cellKey, 1)), NodePools: []NodePool{cellPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %v", plan.Unschedulable)
	}
	if got, want := cells(&plan), []string{"c1", "c2", "c3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claims' cells = %v, want %v", got, want)
	}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		if n := len(nc.Pods); n != 2 {
			t.Errorf("claim in %s holds %d pods, want 2", cellOf(nc), n)
		}
		if nc.Labels[cellKey] != cellOf(nc) {
			t.Errorf("claim in %s labelled %s=%q", cellOf(nc), cellKey, nc.Labels[cellKey])
		}
	}
}

// Required anti-affinity on the key: two pods, two cells; a pod selecting
// a cell gets a claim in it.
func TestFreeKeyAntiAffinityAndSelector(t *testing.T) {
	anti := func(p *Pod) {
		p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: cellKey, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}
	}
	db := each(labelled("db", 2, 200, 256, "db"), anti)
	picky := pod("picky", 200, 256)
	picky.NodeSelector = map[string]string{cellKey: "c3"}
	in := Input{Pods: append(db, picky), NodePools: []NodePool{cellPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	a, b := claimOf(&plan, "default/db-aa"), claimOf(&plan, "default/db-ab")
	if a == nil || b == nil || a == b || cellOf(a) == "" || cellOf(a) == cellOf(b) {
		t.Fatalf("db pods' claims %v and %v: want two claims in distinct cells", a, b)
	}
	if nc := claimOf(&plan, "default/picky"); nc == nil || cellOf(nc) != "c3" {
		t.Errorf("pod selecting c3 got claim %v, want one in c3", nc)
	}
}

// Without a constraint on the key, a claim still gets one value (a NodeClaim
// carries one label value): the first its pods admit.
func TestFreeKeyUnconstrainedClaimGetsOneValue(t *testing.T) {
	in := Input{Pods: pods("p", 2, 200, 256), NodePools: []NodePool{cellPool()}}
	plan := Solve(in)
	if len(plan.NewNodeClaims) != 1 || cellOf(&plan.NewNodeClaims[0]) != "c1" {
		t.Fatalf("claims %v, want one in c1", cells(&plan))
	}
	np := cellPool()
	np.Requirements = append(np.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: cellKey, Operator: apiv1.OpNotIn, Values: []string{"c1"}})
	in = Input{Pods: each(labelled("web", 4, 200, 256, "web"), spreadOn(cellKey, 1)), NodePools: []NodePool{np}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got, want := cells(&plan), []string{"c2", "c3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with NotIn [c1]: claims' cells = %v, want %v", got, want)
	}
}
