package solver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func sel(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func labelled(prefix string, n int, cpu, mem int64, app string) []Pod {
	ps := pods(prefix, n, cpu, mem)
	for i := range ps {
		ps[i].Labels = map[string]string{"app": app}
	}
	return ps
}

func each(ps []Pod, f func(p *Pod)) []Pod {
	for i := range ps {
		f(&ps[i])
	}
	return ps
}

// zoneOfClaim returns the single zone of a claim's offerings ("" if several).
func zoneOfClaim(nc *NewNodeClaim) string {
	z := ""
	for _, o := range nc.InstanceTypes {
		for _, of := range o.Offerings {
			if z != "" && of.Zone != z {
				return ""
			}
			z = of.Zone
		}
	}
	return z
}

func podsPerZone(t *testing.T, plan *Plan) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := range plan.NewNodeClaims {
		z := zoneOfClaim(&plan.NewNodeClaims[i])
		if z == "" {
			t.Fatalf("claim %d is not pinned to one zone", i)
		}
		out[z] += len(plan.NewNodeClaims[i].Pods)
	}
	return out
}

func basicPool() NodePool {
	return synthPool("p", 0, synth{name: "c2", cpu: 2000, memMiB: 4096, price: 0.1}, synth{name: "c8", cpu: 8000, memMiB: 16384, price: 0.4})
}

func TestTopologyZoneSpread(t *testing.T) {
	spread := func(p *Pod) {
		p.TopologySpread = zoneSpread(corev1.DoNotSchedule, sel("web"))
	}
	in := Input{Pods: each(labelled("web", 6, 500, 512, "web"), spread), NodePools: []NodePool{basicPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	got := podsPerZone(t, &plan)
	for _, z := range testZones {
		if got[z] != 2 {
			t.Errorf("zone spread: %v, want 2 per zone", got)
			break
		}
	}
	// Existing pods count: two web pods already run in zone a, so four new
	// ones go two each to b and c.
	in.Pods = in.Pods[:4]
	in.ExistingPods = []ExistingPod{
		{Pod: Pod{Namespace: "default", Name: "old-1", Labels: map[string]string{"app": "web"}}, Node: "n1", Zone: "us-east-1a"},
		{Pod: Pod{Namespace: "default", Name: "old-2", Labels: map[string]string{"app": "web"}}, Node: "n1", Zone: "us-east-1a"},
	}
	plan = Solve(in)
	got = podsPerZone(t, &plan)
	if got["us-east-1a"] != 0 || got["us-east-1b"] != 2 || got["us-east-1c"] != 2 {
		t.Errorf("with existing pods in a: %v, want b=2 c=2", got)
	}
	// A pod in another namespace is not counted.
	in.ExistingPods[0].Pod.Namespace, in.ExistingPods[1].Pod.Namespace = "other", "other"
	plan = Solve(in)
	if got = podsPerZone(t, &plan); got["us-east-1a"] == 0 {
		t.Errorf("pods of another namespace were counted: %v", got)
	}
}

func TestTopologyZoneSpreadMinDomains(t *testing.T) {
	// Only zone a is eligible (node affinity); with minDomains 3 the global
	// minimum is taken as 0, so only maxSkew pods fit in zone a.
	md := int32(3)
	ps := each(labelled("web", 3, 500, 512, "web"), func(p *Pod) {
		p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, MinDomains: &md, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")}}
		p.NodeSelector = map[string]string{apiv1.LabelZone: "us-east-1a"}
	})
	in := Input{Pods: ps, NodePools: []NodePool{basicPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if n := len(plan.Unschedulable); n != 2 {
		t.Errorf("%d unschedulable, want 2 (1 pod allowed in the only domain)", n)
	}
	for _, u := range plan.Unschedulable {
		if !strings.Contains(u.Reason, "topology constraints cannot be met: pod spread on topology.kubernetes.io/zone") {
			t.Errorf("reason %q", u.Reason)
		}
	}
	// Without minDomains all three share zone a (skew measured in one domain).
	for i := range ps {
		ps[i].TopologySpread[0].MinDomains = nil
	}
	plan = Solve(in)
	if len(plan.Unschedulable) != 0 {
		t.Errorf("without minDomains: %d unschedulable", len(plan.Unschedulable))
	}
}

func TestTopologyHostnameSpreadAndAntiAffinity(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     func(p *Pod)
		nodes int
	}{
		{"spread maxSkew 1", func(p *Pod) {
			p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")}}
		}, 4},
		{"spread maxSkew 2", func(p *Pod) {
			p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")}}
		}, 2},
		{"anti-affinity", func(p *Pod) {
			p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: sel("web")}}}
		}, 4},
		{"affinity", func(p *Pod) {
			p.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: sel("web")}}}
		}, 1},
		{"none", func(p *Pod) {}, 1},
	} {
		in := Input{Pods: each(labelled("web", 4, 500, 512, "web"), c.f), NodePools: []NodePool{basicPool()}}
		plan := Solve(in)
		checkPlanInvariants(t, in, &plan)
		if len(plan.NewNodeClaims) != c.nodes || len(plan.Unschedulable) != 0 {
			t.Errorf("%s: %d nodes, %d unschedulable; want %d nodes", c.name, len(plan.NewNodeClaims), len(plan.Unschedulable), c.nodes)
		}
	}
}

func TestTopologyExistingPodAntiAffinity(t *testing.T) {
	// The existing node has room, but a pod on it refuses app=web neighbours.
	node := Node{Name: "n1", Labels: map[string]string{apiv1.LabelZone: "us-east-1a", apiv1.LabelHostname: "n1"},
		Available: resources.List{resources.CPU: 4000, resources.Memory: 8 << 30, resources.Pods: 100}}
	guard := ExistingPod{Node: "n1", Zone: "us-east-1a", Pod: Pod{Namespace: "default", Name: "guard", Labels: map[string]string{"app": "guard"},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: sel("web")}}}}}
	in := Input{Pods: append(labelled("web", 1, 500, 512, "web"), labelled("api", 1, 500, 512, "api")...), NodePools: []NodePool{basicPool()},
		ExistingNodes: []Node{node}, ExistingPods: []ExistingPod{guard}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.ExistingPlacements) != 1 || plan.ExistingPlacements[0].Pod != "default/api-aa" {
		t.Errorf("existing placements %+v, want only the api pod", plan.ExistingPlacements)
	}
	if claimOf(&plan, "default/web-aa") == nil {
		t.Error("web pod got no new node")
	}
	// Zone anti-affinity of the existing pod keeps web out of zone a.
	guard.Pod.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = apiv1.LabelZone
	in.ExistingPods = []ExistingPod{guard}
	plan = Solve(in)
	if nc := claimOf(&plan, "default/web-aa"); nc == nil || zoneOfClaim(nc) == "us-east-1a" || zoneOfClaim(nc) == "" {
		t.Errorf("web claim %+v, want one pinned outside us-east-1a", nc)
	}
}

func TestTopologyZoneAffinity(t *testing.T) {
	// Required zone affinity to an existing db pod in zone b.
	db := ExistingPod{Node: "x", Zone: "us-east-1b", Pod: Pod{Namespace: "default", Name: "db", Labels: map[string]string{"app": "db"}}}
	ps := each(labelled("web", 6, 1500, 1024, "web"), func(p *Pod) {
		p.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelZone, LabelSelector: sel("db")}}}
	})
	in := Input{Pods: ps, NodePools: []NodePool{basicPool()}, ExistingPods: []ExistingPod{db}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := podsPerZone(t, &plan); got["us-east-1b"] != 6 {
		t.Errorf("zones %v, want all 6 in us-east-1b", got)
	}
	// No db pod anywhere and the selector does not match the pods: unschedulable.
	in.ExistingPods = nil
	plan = Solve(in)
	if len(plan.Unschedulable) != 6 {
		t.Errorf("%d unschedulable, want 6", len(plan.Unschedulable))
	}
	// Affinity to pods later in the batch: retried once they are placed.
	dbPod := labelled("db", 1, 100, 128, "db")
	in.Pods = append(ps, dbPod...)
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.Unschedulable) != 0 {
		t.Errorf("with the db pod in the batch: %+v", plan.Unschedulable)
	}
}

func TestPreferencesRelaxed(t *testing.T) {
	// Preferred node affinity is honoured when possible...
	pref := func(zone string) func(p *Pod) {
		return func(p *Pod) {
			p.PreferredAffinity = []WeightedTerm{{Weight: 50, Requirements: []req{{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{zone}}}}}
		}
	}
	in := Input{Pods: each(pods("a", 2, 500, 512), pref("us-east-1c")), NodePools: []NodePool{basicPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if got := podsPerZone(t, &plan); got["us-east-1c"] != 2 {
		t.Errorf("preferred zone: %v", got)
	}
	// ...and relaxed when it cannot be met.
	in.Pods = each(pods("a", 2, 500, 512), pref("eu-west-1a"))
	plan = Solve(in)
	if len(plan.Unschedulable) != 0 || len(plan.NewNodeClaims) != 1 {
		t.Errorf("impossible preference not relaxed: %d claims, %+v", len(plan.NewNodeClaims), plan.Unschedulable)
	}
	// Preferred anti-affinity is relaxed when the node limit forbids more nodes.
	pool := basicPool()
	pool.NodesLimit = 1
	in = Input{Pods: each(labelled("w", 3, 500, 512, "w"), func(p *Pod) {
		p.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10,
			PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: apiv1.LabelHostname, LabelSelector: sel("w")}}}}
	}), NodePools: []NodePool{pool}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 1 || len(plan.Unschedulable) != 0 {
		t.Errorf("preferred anti-affinity: %d claims, %d unschedulable; want 1 and 0", len(plan.NewNodeClaims), len(plan.Unschedulable))
	}
	pool.NodesLimit = -1
	in.NodePools = []NodePool{pool}
	if plan = Solve(in); len(plan.NewNodeClaims) != 3 {
		t.Errorf("preferred anti-affinity without a limit: %d claims, want 3", len(plan.NewNodeClaims))
	}
	// ScheduleAnyway spread is relaxed too.
	pool.NodesLimit = 1
	in = Input{Pods: each(labelled("s", 3, 500, 512, "s"), func(p *Pod) {
		p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel("s")}}
	}), NodePools: []NodePool{pool}}
	if plan = Solve(in); len(plan.NewNodeClaims) != 1 || len(plan.Unschedulable) != 0 {
		t.Errorf("ScheduleAnyway: %d claims, %d unschedulable", len(plan.NewNodeClaims), len(plan.Unschedulable))
	}
}

func TestTolerationsPreferNoScheduleAndExists(t *testing.T) {
	soft := synthPool("soft", 10, synth{name: "c2", cpu: 2000, memMiB: 4096, price: 0.01})
	soft.Taints = []corev1.Taint{{Key: "spot-only", Effect: corev1.TaintEffectPreferNoSchedule}}
	other := synthPool("other", 0, synth{name: "c2x", cpu: 2000, memMiB: 4096, price: 0.5})
	p := pod("a", 500, 512)
	// PreferNoSchedule is avoided while another pool fits...
	plan := Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{soft, other}})
	if nc := onlyClaim(t, &plan); nc.NodePool != "other" {
		t.Errorf("pool %s, want other", nc.NodePool)
	}
	// ...used when nothing else does...
	plan = Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{soft}})
	if nc := onlyClaim(t, &plan); nc.NodePool != "soft" {
		t.Errorf("pool %s, want soft", nc.NodePool)
	}
	// ...and an Exists toleration without key tolerates it from the start.
	p.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	plan = Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{soft, other}})
	if nc := onlyClaim(t, &plan); nc.NodePool != "soft" {
		t.Errorf("tolerating pod in %s, want soft", nc.NodePool)
	}
}

func TestVolumeZoneRequirements(t *testing.T) {
	p := pod("db", 500, 512)
	p.VolumeRequirements = [][]req{{{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{"us-east-1c"}}}}
	in := Input{Pods: []Pod{p}, NodePools: []NodePool{basicPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if z := zoneOfClaim(onlyClaim(t, &plan)); z != "us-east-1c" {
		t.Errorf("zone %q, want us-east-1c", z)
	}
	p.VolumeRequirements[0][0].Values = []string{"eu-west-1a"}
	plan = Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{basicPool()}})
	if r, _ := unschedulable(&plan, p.Key()); !strings.Contains(r, "topology.kubernetes.io/zone In [eu-west-1a]") {
		t.Errorf("reason %q", r)
	}
}

// TestDeterminism: the same input gives the same plan byte for byte, also
// when the input lists are permuted.
func TestDeterminism(t *testing.T) {
	in := inputA(500, 42)
	a, _ := json.Marshal(Solve(in))
	b, _ := json.Marshal(Solve(in))
	if !bytes.Equal(a, b) {
		t.Fatal("two solves of one input differ")
	}
	rev := in
	rev.Pods = append([]Pod(nil), in.Pods...)
	for i, j := 0, len(rev.Pods)-1; i < j; i, j = i+1, j-1 {
		rev.Pods[i], rev.Pods[j] = rev.Pods[j], rev.Pods[i]
	}
	c, _ := json.Marshal(Solve(rev))
	if !bytes.Equal(a, c) {
		t.Fatal("permuting the pods changed the plan")
	}
}
