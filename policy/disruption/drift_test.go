package disruption

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hashPool() *apiv1.NodePool {
	w := int32(10)
	np := testPool("general-purpose")
	np.Spec.Weight = &w
	np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "a"}
	np.Spec.Template.Spec = apiv1.NodeClaimTemplateSpec{
		NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		Requirements: []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}}},
		Taints: []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule},
			{Key: "b", Effect: corev1.TaintEffectNoExecute}},
	}
	return np
}

// Karpenter's static drift fields change the hash; requirements (hashed
// "ignore" in Karpenter), disruption settings, limits and weight do not.
func TestNodePoolHashHashesTheStaticTemplateFieldsOnly(t *testing.T) {
	base := NodePoolHash(hashPool())
	cases := []struct {
		name    string
		change  func(*apiv1.NodePool)
		changes bool
	}{
		{"template label", func(p *apiv1.NodePool) { p.Spec.Template.ObjectMeta.Labels["team"] = "b" }, true},
		{"template annotation", func(p *apiv1.NodePool) { p.Spec.Template.ObjectMeta.Annotations = map[string]string{"x": "y"} }, true},
		{"taint", func(p *apiv1.NodePool) { p.Spec.Template.Spec.Taints[0].Value = "2" }, true},
		{"startup taint", func(p *apiv1.NodePool) {
			p.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "s", Effect: corev1.TaintEffectNoSchedule}}
		}, true},
		{"nodeClassRef", func(p *apiv1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "other" }, true},
		{"expireAfter", func(p *apiv1.NodePool) { p.Spec.Template.Spec.ExpireAfter = "24h" }, true},
		{"expireAfter Never", func(p *apiv1.NodePool) { p.Spec.Template.Spec.ExpireAfter = "Never" }, true},
		{"terminationGracePeriod", func(p *apiv1.NodePool) {
			p.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
		}, true},
		{"requirement values", func(p *apiv1.NodePool) { p.Spec.Template.Spec.Requirements[0].Values = []string{"arm64"} }, false},
		{"requirement added", func(p *apiv1.NodePool) {
			p.Spec.Template.Spec.Requirements = append(p.Spec.Template.Spec.Requirements,
				apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"m7i"}})
		}, false},
		{"weight", func(p *apiv1.NodePool) { w := int32(50); p.Spec.Weight = &w }, false},
		{"disruption", func(p *apiv1.NodePool) {
			p.Spec.Disruption.ConsolidateAfter = "5m"
			p.Spec.Disruption.Budgets = []apiv1.Budget{{Nodes: "1"}}
		}, false},
		{"limits", func(p *apiv1.NodePool) {
			p.Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}
		}, false},
		{"taint order", func(p *apiv1.NodePool) {
			ts := p.Spec.Template.Spec.Taints
			ts[0], ts[1] = ts[1], ts[0]
		}, false},
		{"expireAfter written as the 720h default", func(p *apiv1.NodePool) { p.Spec.Template.Spec.ExpireAfter = "720h" }, false},
		{"expireAfter 720h written otherwise", func(p *apiv1.NodePool) { p.Spec.Template.Spec.ExpireAfter = "719h60m" }, false},
		{"empty labels map", func(p *apiv1.NodePool) { p.Spec.Template.ObjectMeta.Annotations = map[string]string{} }, false},
	}
	for _, c := range cases {
		p := hashPool()
		c.change(p)
		if got := NodePoolHash(p) != base; got != c.changes {
			t.Errorf("%s: hash changed %v, want %v", c.name, got, c.changes)
		}
	}
}

func stamped(pool *apiv1.NodePool, version string) *apiv1.NodeClaim {
	_, nc := testClaim(0, pool)
	nc.Annotations = map[string]string{AnnotationNodePoolHash: NodePoolHash(pool), AnnotationNodePoolHashVersion: version}
	return nc
}

func TestStaticDriftComparesHashesOfTheSameVersionOnly(t *testing.T) {
	before := hashPool()
	after := hashPool()
	after.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	noVersion := stamped(before, "")
	delete(noVersion.Annotations, AnnotationNodePoolHashVersion)
	noHash := stamped(before, NodePoolHashVersion)
	delete(noHash.Annotations, AnnotationNodePoolHash)
	cases := []struct {
		name  string
		claim *apiv1.NodeClaim
		pool  *apiv1.NodePool
		drift bool
	}{
		{"same version, template unchanged", stamped(before, NodePoolHashVersion), before, false},
		{"same version, template changed", stamped(before, NodePoolHashVersion), after, true},
		{"Karpenter's version", stamped(before, "v3"), after, false},
		{"no version (stamped before versions)", noVersion, after, false},
		{"no hash", noHash, after, false},
	}
	for _, c := range cases {
		if got := StaticDrift(c.claim, c.pool); got != c.drift {
			t.Errorf("%s: drift %v, want %v", c.name, got, c.drift)
		}
	}
}

// After a hash version change the claims are re-stamped, not drifted; an
// already drifted one keeps its old hash (it stays drifted).
func TestHashRestampAfterAVersionChange(t *testing.T) {
	pool := hashPool()
	old := stamped(pool, "")
	old.Annotations[AnnotationNodePoolHash] = "0123456789abcdef" // the unversioned hash, requirements included
	delete(old.Annotations, AnnotationNodePoolHashVersion)
	got := HashRestamp(old, pool)
	if len(got) != 2 || got[AnnotationNodePoolHashVersion] != NodePoolHashVersion || got[AnnotationNodePoolHash] != NodePoolHash(pool) {
		t.Fatalf("re-stamp of an undrifted claim: %v", got)
	}
	for k, v := range got {
		old.Annotations[k] = v
	}
	if StaticDrift(old, pool) || HashRestamp(old, pool) != nil {
		t.Errorf("a re-stamped claim drifts (%v) or is re-stamped again (%v)", StaticDrift(old, pool), HashRestamp(old, pool))
	}
	drifted := stamped(pool, "v3")
	drifted.Annotations[AnnotationNodePoolHash] = "0123456789abcdef"
	drifted.Status.Conditions = append(drifted.Status.Conditions, metav1.Condition{Type: apiv1.ConditionDrifted, Status: metav1.ConditionTrue, Reason: ReasonNodePoolDrifted})
	got = HashRestamp(drifted, pool)
	if len(got) != 1 || got[AnnotationNodePoolHashVersion] != NodePoolHashVersion {
		t.Fatalf("re-stamp of a drifted claim: %v, want the version only", got)
	}
	for k, v := range got {
		drifted.Annotations[k] = v
	}
	if !StaticDrift(drifted, pool) {
		t.Error("a claim drifted before the re-stamp no longer drifts")
	}
	if HashRestamp(stamped(pool, NodePoolHashVersion), pool) != nil || HashRestamp(old, nil) != nil {
		t.Error("re-stamped a current claim, or one whose pool is gone")
	}
}

func req(key, op string, values ...string) apiv1.NodeSelectorRequirementWithMinValues {
	return apiv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// Karpenter's Compatible(nodeClaimLabels, nodePoolRequirements), case by
// case: a present label must be admitted; an absent one only by NotIn or
// DoesNotExist.
func TestRequirementsDriftAdmitsExactly(t *testing.T) {
	const fam, gen, cat = apiv1.LabelInstanceFamily, apiv1.LabelInstanceGen, apiv1.LabelInstanceCategory
	claimLabels := map[string]string{fam: "m7i", gen: "7", cat: "m", apiv1.LabelArch: "amd64", apiv1.LabelZone: "us-east-1a",
		apiv1.LabelCapacityType: "spot", "team": "a"}
	cases := []struct {
		name  string
		reqs  []apiv1.NodeSelectorRequirementWithMinValues
		node  map[string]string // the Node's labels
		drift bool
	}{
		{"In holds the value", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpIn, "c7i", "m7i")}, nil, false},
		{"In lost the value", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpIn, "c7i")}, nil, true},
		{"NotIn the value", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpNotIn, "m7i")}, nil, true},
		{"NotIn others", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpNotIn, "c7i")}, nil, false},
		{"Exists", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpExists)}, nil, false},
		{"DoesNotExist on a present label", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpDoesNotExist)}, nil, true},
		{"Gt below", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGt, "6")}, nil, false},
		{"Gt equal", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGt, "7")}, nil, true},
		{"Lt above", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpLt, "8")}, nil, false},
		{"Gt and Lt leave no room", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGt, "6"), req(gen, apiv1.OpLt, "7")}, nil, true},
		{"Gte equal", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGte, "7")}, nil, false},
		{"Gte above the value", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGte, "8")}, nil, true},
		{"Lte equal", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpLte, "7")}, nil, false},
		{"Lte below the value", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpLte, "6")}, nil, true},
		{"Gte and Lte hold just the value", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGte, "7"), req(gen, apiv1.OpLte, "7")}, nil, false},
		{"Gte and Lt leave no room", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpGte, "7"), req(gen, apiv1.OpLt, "7")}, nil, true},
		{"In and Gte intersect", []apiv1.NodeSelectorRequirementWithMinValues{req(gen, apiv1.OpIn, "6", "7"), req(gen, apiv1.OpGte, "8")}, nil, true},
		{"absent label, Lte", []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelInstanceGPUCount, apiv1.OpLte, "4")}, nil, true},
		{"Gt on a non-integer value", []apiv1.NodeSelectorRequirementWithMinValues{req(cat, apiv1.OpGt, "1")}, nil, true},
		{"In and NotIn of one key intersect", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpIn, "c7i", "m7i"), req(fam, apiv1.OpNotIn, "m7i")}, nil, true},
		{"In and NotIn of one key, value kept", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpIn, "c7i", "m7i"), req(fam, apiv1.OpNotIn, "c7i")}, nil, false},
		{"absent label, In", []apiv1.NodeSelectorRequirementWithMinValues{req("disk", apiv1.OpIn, "ssd")}, nil, true},
		{"absent label, Exists", []apiv1.NodeSelectorRequirementWithMinValues{req("disk", apiv1.OpExists)}, nil, true},
		{"absent label, Gt", []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelInstanceGPUCount, apiv1.OpGt, "0")}, nil, true},
		{"absent label, NotIn", []apiv1.NodeSelectorRequirementWithMinValues{req("disk", apiv1.OpNotIn, "hdd")}, nil, false},
		{"absent label, DoesNotExist", []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelInstanceGPUCount, apiv1.OpDoesNotExist)}, nil, false},
		// Karpenter's quirk, kept: disjoint Ins intersect to DoesNotExist, which an absent label meets.
		{"absent label, disjoint Ins", []apiv1.NodeSelectorRequirementWithMinValues{req("disk", apiv1.OpIn, "ssd"), req("disk", apiv1.OpIn, "hdd")}, nil, false},
		{"deprecated alias normalized", []apiv1.NodeSelectorRequirementWithMinValues{req("beta.kubernetes.io/arch", apiv1.OpIn, "amd64")}, nil, false},
		{"deprecated alias normalized, value lost", []apiv1.NodeSelectorRequirementWithMinValues{req("beta.kubernetes.io/arch", apiv1.OpIn, "arm64")}, nil, true},
		{"region from the Node", []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelRegion, apiv1.OpIn, "us-east-1")},
			map[string]string{apiv1.LabelRegion: "us-east-1"}, false},
		{"region nowhere", []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelRegion, apiv1.OpIn, "us-east-1")}, nil, true},
		{"a custom label only on the Node does not count", []apiv1.NodeSelectorRequirementWithMinValues{req("disk", apiv1.OpIn, "ssd")},
			map[string]string{"disk": "ssd"}, true},
		{"the NodeClaim's label wins over the Node's", []apiv1.NodeSelectorRequirementWithMinValues{req(fam, apiv1.OpIn, "m7i")},
			map[string]string{fam: "c7i"}, false},
		{"template label required", []apiv1.NodeSelectorRequirementWithMinValues{req("team", apiv1.OpIn, "a")}, nil, false},
		{"no requirements", nil, nil, false},
	}
	for _, c := range cases {
		pool := testPool("general-purpose")
		pool.Spec.Template.Spec.Requirements = c.reqs
		_, nc := testClaim(0, pool)
		nc.Labels = claimLabels
		var node *corev1.Node
		if c.node != nil {
			node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: c.node}}
		}
		why := RequirementsDrift(nc, node, pool)
		if (why != "") != c.drift {
			t.Errorf("%s: drift %q, want drifted=%v", c.name, why, c.drift)
		}
	}
}

// The case: two nodes of different families, one family removed
// from the requirement: only that node drifts, for RequirementsDrifted.
func TestDriftByRequirementsDriftsOnlyTheNodesNoLongerAdmitted(t *testing.T) {
	pool := hashPool()
	pool.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{req(apiv1.LabelInstanceFamily, apiv1.OpIn, "c7i", "m7i")}
	claim := func(family string) *apiv1.NodeClaim {
		nc := stamped(pool, NodePoolHashVersion)
		nc.Labels = map[string]string{apiv1.LabelNodePool: pool.Name, apiv1.LabelInstanceFamily: family, "team": "a"}
		return nc
	}
	c7i, m7i := claim("c7i"), claim("m7i")
	for _, nc := range []*apiv1.NodeClaim{c7i, m7i} {
		if r, m := Drift(nc, nil, pool, nil, nil, nodeclass.Launched{}); r != "" {
			t.Fatalf("drifted before the edit: %s %s", r, m)
		}
	}
	pool.Spec.Template.Spec.Requirements[0].Values = []string{"c7i"}
	if r, m := Drift(c7i, nil, pool, nil, nil, nodeclass.Launched{}); r != "" {
		t.Errorf("c7i node drifted: %s %s", r, m)
	}
	r, m := Drift(m7i, nil, pool, nil, nil, nodeclass.Launched{})
	want := "label karpenter.k8s.aws/instance-family=m7i is not admitted by NodePool general-purpose's requirement karpenter.k8s.aws/instance-family In [c7i]"
	if r != ReasonRequirementsDrifted || m != want {
		t.Errorf("m7i node: %s %q, want %s %q", r, m, ReasonRequirementsDrifted, want)
	}
	// A static field changes too: the static drift is reported first (Karpenter's order).
	pool.Spec.Template.ObjectMeta.Labels["team"] = "b"
	if r, _ := Drift(m7i, nil, pool, nil, nil, nodeclass.Launched{}); r != ReasonNodePoolDrifted {
		t.Errorf("static and requirements drift: %s, want %s first", r, ReasonNodePoolDrifted)
	}
}

// Drift back-off: a backed-off pool's drifted node is skipped and the next
// pool's drifted node is taken; once the back-off ends the pool drifts
// again; with only backed-off pools drifted, the decision says why.
func TestDriftSkipsBackedOffPoolsAndTakesAnothers(t *testing.T) {
	a, b := testPool("a"), testPool("b")
	mk := func(i int, pool *apiv1.NodePool) Candidate {
		node, nc := testClaim(i, pool)
		nc.Annotations = map[string]string{AnnotationNodePoolHash: "stale", AnnotationNodePoolHashVersion: NodePoolHashVersion}
		return Candidate{Node: node, Claim: nc, Pool: pool, Price: 0.1, Pods: 1}
	}
	cands := []Candidate{mk(0, a), mk(1, a), mk(2, b)}
	pass := func(notBefore map[string]time.Time, cs []Candidate) *Pass {
		return &Pass{Now: t0, Candidates: cs, Pools: map[string]PoolNodes{"a": {Nodes: 2}, "b": {Nodes: 1}}, DriftNotBefore: notBefore,
			Simulate: func([]string) solver.RemovalResult { return solver.RemovalResult{Reason: "no room"} }}
	}
	d := Decide(pass(nil, cands))
	if d.Method != saga.MethodDrift || d.Nodes[0] != "ip-10-0-0-10.ec2.internal" || d.NodePool != "a" {
		t.Fatalf("no back-off: %+v, want pool a's first node", d)
	}
	d = Decide(pass(map[string]time.Time{"a": t0.Add(time.Minute)}, cands))
	if d.Method != saga.MethodDrift || d.Nodes[0] != "ip-10-0-0-12.ec2.internal" || d.NodePool != "b" {
		t.Fatalf("pool a backed off: %+v, want pool b's node", d)
	}
	d = Decide(pass(map[string]time.Time{"a": t0}, cands))
	if d.NodePool != "a" {
		t.Fatalf("pool a's back-off ended at now: %+v, want pool a's node", d)
	}
	d = Decide(pass(map[string]time.Time{"a": t0.Add(time.Minute)}, cands[:2]))
	if d.Method != "" || !strings.HasSuffix(d.Why, "; drift of NodePool a backed off until 2026-11-29T12:01:00Z") {
		t.Fatalf("only pool a drifted, backed off: %+v", d)
	}
}

// A NodePool is annotated with its own hash and the hash's version, as
// Karpenter's NodePool hash controller writes them: once written nothing
// more is asked; a static field edit asks for the new hash, a Karpenter
// hash version (v3) for ours, a requirement edit for nothing (not hashed).
func TestPoolHashAnnotations(t *testing.T) {
	pool := hashPool()
	got := PoolHashAnnotations(pool)
	want := map[string]string{AnnotationNodePoolHash: NodePoolHash(pool), AnnotationNodePoolHashVersion: NodePoolHashVersion}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("annotations for an unannotated pool = %v, want %v", got, want)
	}
	if len(got[AnnotationNodePoolHash]) != 16 || got[AnnotationNodePoolHashVersion] != "joinery-2" {
		t.Errorf("hash %q version %q, want 16 hex digits and joinery-2", got[AnnotationNodePoolHash], got[AnnotationNodePoolHashVersion])
	}
	pool.Annotations = got
	if a := PoolHashAnnotations(pool); a != nil {
		t.Errorf("an annotated pool asks for %v", a)
	}
	pool.Spec.Template.Spec.Requirements[0].Values = []string{"arm64"}
	if a := PoolHashAnnotations(pool); a != nil {
		t.Errorf("a requirement edit asks for %v", a)
	}
	pool.Spec.Template.ObjectMeta.Labels["team"] = "b"
	a := PoolHashAnnotations(pool)
	if a == nil || a[AnnotationNodePoolHash] == want[AnnotationNodePoolHash] || a[AnnotationNodePoolHash] != NodePoolHash(pool) {
		t.Errorf("after a label edit: %v, want the new hash %s", a, NodePoolHash(pool))
	}
	pool.Annotations = map[string]string{AnnotationNodePoolHash: NodePoolHash(pool), AnnotationNodePoolHashVersion: "v3"}
	if a := PoolHashAnnotations(pool); a[AnnotationNodePoolHashVersion] != NodePoolHashVersion {
		t.Errorf("a pool Karpenter annotated (v3) gets %v", a)
	}
}

// ipPrefixCount stays out of the class hash, as in Karpenter (hash
// "ignore"): changing it drifts no running node; a launch field that is
// hashed (detailedMonitoring) does.
func TestNodeClassHashIgnoresIPPrefixCount(t *testing.T) {
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{AMIFamily: "AL2023", Role: "KarpenterNodeRole"}}
	cls.Name = "default"
	base := NodeClassHash(cls)
	for _, n := range []int32{0, 1, 4} {
		c := *cls
		c.Spec.IPPrefixCount = &n
		if h := NodeClassHash(&c); h != base {
			t.Errorf("ipPrefixCount %d changed the hash: %s, was %s", n, h, base)
		}
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationNodeClassHash: base}}}
		if reason, _ := Drift(claim, nil, nil, &c, nil, nodeclass.Launched{}); reason != "" {
			t.Errorf("ipPrefixCount %d drifted a node: %s", n, reason)
		}
	}
	yes := true
	c := *cls
	c.Spec.DetailedMonitoring = &yes
	if NodeClassHash(&c) == base {
		t.Error("detailedMonitoring left the hash unchanged")
	}
}
