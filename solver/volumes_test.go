package solver

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volWorld is a set of claims, volumes and classes for VolumesOf.
type volWorld struct {
	pvcs map[string]*corev1.PersistentVolumeClaim
	pvs  map[string]*corev1.PersistentVolume
	scs  map[string]*storagev1.StorageClass
}

func newVolWorld() *volWorld {
	return &volWorld{pvcs: map[string]*corev1.PersistentVolumeClaim{}, pvs: map[string]*corev1.PersistentVolume{}, scs: map[string]*storagev1.StorageClass{}}
}

func (w *volWorld) objs() VolumeObjects {
	return VolumeObjects{
		PVC:          func(ns, n string) *corev1.PersistentVolumeClaim { return w.pvcs[ns+"/"+n] },
		PV:           func(n string) *corev1.PersistentVolume { return w.pvs[n] },
		StorageClass: func(n string) *storagev1.StorageClass { return w.scs[n] },
	}
}

// ebsPV is an EBS CSI volume whose node affinity is key In zones (one term).
func (w *volWorld) ebsPV(name, key string, zones ...string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: EBSDriver, VolumeHandle: "vol-" + name}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: zones}}}}}}}}
	w.pvs[name] = pv
	return pv
}

// claim adds default/<name>, bound to pv when pv is not "", else of class sc.
func (w *volWorld) claim(name, pv, sc string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}}
	if sc != "" {
		c.Spec.StorageClassName = &sc
	}
	w.pvcs["default/"+name] = c
	return c
}

func (w *volWorld) class(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: apiv1.LabelEBSCSIZone, Values: zones}}}}
	}
	w.scs[name] = sc
	return sc
}

func podWithClaims(name string, claims ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for i, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v" + string(rune('0'+i)), VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func zoneIn(zones ...string) req {
	return req{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: zones}
}

func TestVolumesOf(t *testing.T) {
	w := newVolWorld()
	w.ebsPV("pv-c", apiv1.LabelZone, "us-east-1c")
	w.ebsPV("pv-old", apiv1.LabelEBSCSIZone, "us-east-1b") // an older driver's key
	w.claim("bound-c", "pv-c", "gp3")
	w.claim("bound-old", "pv-old", "")
	w.class("gp3", EBSDriver, storagev1.VolumeBindingWaitForFirstConsumer, "us-east-1a", "us-east-1b")
	w.class("imm", EBSDriver, storagev1.VolumeBindingImmediate)
	w.class("efs", "efs.csi.aws.com", storagev1.VolumeBindingWaitForFirstConsumer)
	w.claim("wffc", "", "gp3")
	w.claim("immediate", "", "imm")
	w.claim("no-class", "", "")
	w.claim("missing-class", "", "nope")
	w.claim("to-nowhere", "pv-gone", "gp3")
	w.claim("shared-fs", "", "efs")
	// A PV with two terms (zones ORed), and a local PV pinned to a host.
	multi := w.ebsPV("pv-multi", apiv1.LabelZone, "us-east-1a")
	multi.Spec.NodeAffinity.Required.NodeSelectorTerms = append(multi.Spec.NodeAffinity.Required.NodeSelectorTerms,
		corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1b"}}}})
	w.claim("multi", "pv-multi", "")
	local := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"gone-node"}}}}}}}}}
	w.pvs["pv-local"] = local
	w.claim("local", "pv-local", "")
	// An in-tree EBS volume labelled with its zone (VolumeZone plugin).
	w.pvs["pv-intree"] = &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-intree", Labels: map[string]string{"failure-domain.beta.kubernetes.io/zone": "us-east-1a__us-east-1b"}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}}
	w.claim("intree", "pv-intree", "")

	cases := []struct {
		name    string
		pod     *corev1.Pod
		reqs    [][]req
		ebs     []string
		refused string // substring
	}{
		{"bound EBS volume: its zone", podWithClaims("a", "bound-c"), [][]req{{zoneIn("us-east-1c")}}, []string{"pv/pv-c"}, ""},
		{"the EBS CSI topology key is the zone", podWithClaims("a", "bound-old"), [][]req{{zoneIn("us-east-1b")}}, []string{"pv/pv-old"}, ""},
		{"WaitForFirstConsumer: allowedTopologies", podWithClaims("a", "wffc"), [][]req{{zoneIn("us-east-1a", "us-east-1b")}}, []string{"pvc/default/wffc"}, ""},
		{"two volumes AND", podWithClaims("a", "bound-c", "wffc"), [][]req{{zoneIn("us-east-1c"), zoneIn("us-east-1a", "us-east-1b")}}, []string{"pv/pv-c", "pvc/default/wffc"}, ""},
		{"the same claim twice is one volume", podWithClaims("a", "bound-c", "bound-c"), [][]req{{zoneIn("us-east-1c")}}, []string{"pv/pv-c"}, ""},
		{"PV terms are alternatives", podWithClaims("a", "multi"), [][]req{{zoneIn("us-east-1a")}, {zoneIn("us-east-1b")}}, []string{"pv/pv-multi"}, ""},
		{"alternatives times a second volume", podWithClaims("a", "multi", "bound-c"), [][]req{{zoneIn("us-east-1a"), zoneIn("us-east-1c")}, {zoneIn("us-east-1b"), zoneIn("us-east-1c")}}, []string{"pv/pv-multi", "pv/pv-c"}, ""},
		{"local PV: hostname dropped, unconstrained", podWithClaims("a", "local"), nil, nil, ""},
		{"in-tree EBS: zone labels, counted", podWithClaims("a", "intree"), [][]req{{zoneIn("us-east-1a", "us-east-1b")}}, []string{"pv/pv-intree"}, ""},
		{"other driver: not counted", podWithClaims("a", "shared-fs"), nil, nil, ""},
		{"missing claim", podWithClaims("a", "nope"), nil, nil, `persistentvolumeclaim "nope" not found`},
		{"unbound Immediate", podWithClaims("a", "immediate"), nil, nil, "binds Immediate"},
		{"unbound without class", podWithClaims("a", "no-class"), nil, nil, "has no StorageClass"},
		{"unbound, class missing", podWithClaims("a", "missing-class"), nil, nil, `storageclass "nope"`},
		{"bound to a missing PV", podWithClaims("a", "to-nowhere"), nil, nil, `persistentvolume "pv-gone", which does not exist`},
	}
	for _, c := range cases {
		got := VolumesOf(c.pod, w.objs())
		if !reflect.DeepEqual(got.Requirements, c.reqs) {
			t.Errorf("%s: requirements %v, want %v", c.name, got.Requirements, c.reqs)
		}
		if c.refused == "" && !reflect.DeepEqual(got.EBS, c.ebs) {
			t.Errorf("%s: EBS %v, want %v", c.name, got.EBS, c.ebs)
		}
		if (c.refused == "") != (got.Refused == "") || !strings.Contains(got.Refused, c.refused) {
			t.Errorf("%s: refused %q, want %q", c.name, got.Refused, c.refused)
		}
	}
}

// Generic ephemeral volumes are their claim <pod>-<volume>: bound, its
// volume's zone; not created yet, the template's class; made by someone
// else, the pod cannot start.
func TestVolumesOfEphemeral(t *testing.T) {
	w := newVolWorld()
	w.class("gp3", EBSDriver, storagev1.VolumeBindingWaitForFirstConsumer, "us-east-1b")
	w.ebsPV("pv-e", apiv1.LabelZone, "us-east-1c")
	sc := "gp3"
	eph := func(podName string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: podName, UID: "uid-pod"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "scratch",
			VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &sc}}}}}}}}
	}
	yes := true
	bound := w.claim("web-0-scratch", "pv-e", "gp3")
	bound.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "web-0", UID: "uid-pod", Controller: &yes}}
	got := VolumesOf(eph("web-0"), w.objs())
	if !reflect.DeepEqual(got.Requirements, [][]req{{zoneIn("us-east-1c")}}) || !reflect.DeepEqual(got.EBS, []string{"pv/pv-e"}) || got.Refused != "" {
		t.Errorf("bound ephemeral: %+v, want zone us-east-1c, pv/pv-e", got)
	}
	got = VolumesOf(eph("web-1"), w.objs())
	if !reflect.DeepEqual(got.Requirements, [][]req{{zoneIn("us-east-1b")}}) || !reflect.DeepEqual(got.EBS, []string{"pvc/default/web-1-scratch"}) || got.Refused != "" {
		t.Errorf("ephemeral claim not yet created: %+v, want the template's class (zone us-east-1b)", got)
	}
	other := w.claim("web-2-scratch", "pv-e", "gp3")
	other.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "web-2", UID: "uid-someone-else", Controller: &yes}}
	if got = VolumesOf(eph("web-2"), w.objs()); !strings.Contains(got.Refused, "was not created for pod default/web-2") {
		t.Errorf("foreign ephemeral claim: refused %q", got.Refused)
	}
}

// A pod whose volume is bound in us-east-1c gets a node there, whatever
// zones its pool offers; ORed volume terms ANDed with the pod's own
// affinity leave only their intersection (Karpenter: "should schedule to
// storage class zones if volume does not exist": pod zones {a, c} and
// class zones {b, c} give c).
func TestVolumeRequirementsPlacement(t *testing.T) {
	w := newVolWorld()
	w.class("sc", EBSDriver, storagev1.VolumeBindingWaitForFirstConsumer, "us-east-1b", "us-east-1c")
	w.claim("data", "", "sc")
	kp := podWithClaims("db", "data")
	kp.Spec.Containers[0].Resources.Requests = cpuMem("500m", "512Mi")
	kp.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a", "us-east-1c"}}}}}}}}
	p := PodWithVolumes(kp, w.objs(), nil)
	in := Input{Pods: []Pod{p}, NodePools: []NodePool{basicPool()}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if z := zoneOfClaim(onlyClaim(t, &plan)); z != "us-east-1c" {
		t.Errorf("zone %q, want us-east-1c (pod a|c, class b|c)", z)
	}
	// Karpenter: "should not schedule if storage class zones are
	// incompatible": the pod wants a, the class allows b and c.
	kp.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"us-east-1a"}
	p = PodWithVolumes(kp, w.objs(), nil)
	plan = Solve(Input{Pods: []Pod{p}, NodePools: []NodePool{basicPool()}})
	if _, ok := unschedulable(&plan, p.Key()); !ok || len(plan.NewNodeClaims) != 0 {
		t.Errorf("pod in a with a volume class of b|c: %d claims, want none and the pod unschedulable", len(plan.NewNodeClaims))
	}
	// Karpenter: "should not relax an added volume topology zone
	// node-selector away": with two ORed pod terms, the volume's zone
	// joins both, and the pod lands in the volume's zone.
	w.ebsPV("pv-c", apiv1.LabelZone, "us-east-1c")
	w.claim("bound", "pv-c", "")
	kp = podWithClaims("db", "bound")
	kp.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "example.com/label", Operator: corev1.NodeSelectorOpIn, Values: []string{"unsupported"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}}}}}}}
	p = PodWithVolumes(kp, w.objs(), nil)
	in = Input{Pods: []Pod{p}, NodePools: []NodePool{basicPool()}}
	plan = Solve(in)
	checkPlanInvariants(t, in, &plan)
	if z := zoneOfClaim(onlyClaim(t, &plan)); z != "us-east-1c" {
		t.Errorf("zone %q, want us-east-1c", z)
	}
	// A refused pod gets the volume reason and no node; the others are
	// still planned (Karpenter: "should schedule valid pods when a pod
	// with an invalid pvc is encountered").
	bad := PodWithVolumes(podWithClaims("bad", "missing"), w.objs(), nil)
	good := pod("good", 500, 512)
	plan = Solve(Input{Pods: []Pod{bad, good}, NodePools: []NodePool{basicPool()}})
	if r, _ := unschedulable(&plan, bad.Key()); r != `persistentvolumeclaim "missing" not found` {
		t.Errorf("refused pod's reason %q", r)
	}
	if claimOf(&plan, good.Key()) == nil {
		t.Errorf("the valid pod was not planned: %+v", plan)
	}
}

// Karpenter's "should schedule pods using a PV with multiple zones": two
// pods, each with its own volume whose PV allows zone a or b, and zone
// anti-affinity between them, get one node in a and one in b.
func TestVolumeAlternativesWithAntiAffinity(t *testing.T) {
	w := newVolWorld()
	var in Input
	for _, name := range []string{"multi-0", "multi-1"} {
		pv := w.ebsPV("pv-"+name, apiv1.LabelZone, "us-east-1a")
		pv.Spec.NodeAffinity.Required.NodeSelectorTerms = append(pv.Spec.NodeAffinity.Required.NodeSelectorTerms,
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1b"}}}})
		w.claim("pvc-"+name, pv.Name, "")
		kp := podWithClaims(name, "pvc-"+name)
		kp.Labels = map[string]string{"app": "multi-zone-app"}
		kp.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{LabelSelector: sel("multi-zone-app"), TopologyKey: apiv1.LabelZone}}}}
		p := PodWithVolumes(kp, w.objs(), nil)
		p.Requests = pod(name, 500, 512).Requests
		in.Pods = append(in.Pods, p)
	}
	in.NodePools = []NodePool{basicPool()}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 2 {
		t.Fatalf("%d claims, want 2 (unschedulable %+v)", len(plan.NewNodeClaims), plan.Unschedulable)
	}
	z0, z1 := zoneOfClaim(&plan.NewNodeClaims[0]), zoneOfClaim(&plan.NewNodeClaims[1])
	if z0 == z1 || (z0 != "us-east-1a" && z0 != "us-east-1b") || (z1 != "us-east-1a" && z1 != "us-east-1b") {
		t.Errorf("zones %q and %q, want us-east-1a and us-east-1b", z0, z1)
	}
}

// Karpenter's "should schedule pod with PVC and TSC minDomains=3 when pods
// are spread across 3 zones": one pod per zone runs; a pod with a volume in
// a and the same spread (maxSkew 1, minDomains 3) goes to a (skew 2,1,1).
// The volume constrains the node, not the domains the spread counts: all
// three zones are eligible, so the global minimum is 1, not 0.
func TestVolumeZoneDoesNotShrinkSpreadDomains(t *testing.T) {
	md := int32(3)
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, MinDomains: &md, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel("web")}}
	var in Input
	for i, z := range testZones {
		in.ExistingPods = append(in.ExistingPods, ExistingPod{Pod: Pod{Namespace: "default", Name: "web-" + string(rune('0'+i)), Labels: map[string]string{"app": "web"}},
			Node: "n-" + z, Zone: z})
	}
	p := pod("web-3", 500, 512)
	p.Labels = map[string]string{"app": "web"}
	p.TopologySpread = spread
	p.VolumeRequirements = [][]req{{zoneIn("us-east-1a")}}
	in.Pods = []Pod{p}
	in.NodePools = []NodePool{basicPool()}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if z := zoneOfClaim(onlyClaim(t, &plan)); z != "us-east-1a" {
		t.Errorf("zone %q, want us-east-1a", z)
	}
	// The other way round the volume does not relax the spread: with two
	// pods in a already, a third there would make the skew 2 (3-1).
	in.ExistingPods = append(in.ExistingPods, ExistingPod{Pod: Pod{Namespace: "default", Name: "web-9", Labels: map[string]string{"app": "web"}}, Node: "n-us-east-1a", Zone: "us-east-1a"})
	plan = Solve(in)
	if _, ok := unschedulable(&plan, p.Key()); !ok {
		t.Errorf("pod placed in a although a holds 2 and b, c 1 each (maxSkew 1): %+v", plan.NewNodeClaims)
	}
}

// ebsPods are n pods of 50m/64Mi, each bringing vols EBS volumes.
func ebsPods(prefix string, n int, vols int64) []Pod {
	ps := pods(prefix, n, 50, 64)
	for i := range ps {
		ps[i].Requests[resources.EBSVolumes] = vols
	}
	return ps
}

// The case: 40 pods with one EBS volume each, a pool of m5.xlarge
// only (4 vCPU, 16 GiB, 58 pods: one node holds all 40 by cpu, memory and
// pods), whose 27 shared attachments leave 26 volumes after the root
// volume (what the EBS CSI driver reports): two nodes, 26 + 14. Karpenter
// does not know a new node's limit (it reads CSINodes of existing nodes
// only), launches one node and leaves 14 pods pending for a second round;
// Joinery plans both nodes at once.
func TestVolumeLimitSplitsNodes(t *testing.T) {
	pool := poolYAML(t, `
metadata: {name: ebs}
spec:
	template:
		spec:
			nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
			requirements:
			- {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}
			- {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`)
	in := Input{Pods: ebsPods("db", 40, 1), NodePools: []NodePool{pool}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.NewNodeClaims) != 2 || len(plan.Unschedulable) != 0 {
		t.Fatalf("%d claims, unschedulable %v; want 2 claims", len(plan.NewNodeClaims), plan.Unschedulable)
	}
	n0, n1 := len(plan.NewNodeClaims[0].Pods), len(plan.NewNodeClaims[1].Pods)
	if max(n0, n1) != 26 || min(n0, n1) != 14 {
		t.Errorf("pods per claim %d and %d, want 26 and 14", n0, n1)
	}
	for _, nc := range plan.NewNodeClaims {
		if nc.Requests[resources.EBSVolumes] != int64(len(nc.Pods)) {
			t.Errorf("claim requests %d EBS volumes for %d pods", nc.Requests[resources.EBSVolumes], len(nc.Pods))
		}
	}
	// Without volumes the same pods share one node.
	in.Pods = ebsPods("web", 40, 0)
	if plan = Solve(in); len(plan.NewNodeClaims) != 1 {
		t.Errorf("40 pods without volumes on %d claims, want 1", len(plan.NewNodeClaims))
	}
	// A pod that needs more volumes than any type allows is unschedulable,
	// with the limit named.
	in.Pods = ebsPods("big", 1, 30)
	plan = Solve(in)
	if r, _ := unschedulable(&plan, "default/big-aa"); !strings.Contains(r, "attachable-volumes-aws-ebs=30 exceed the largest allocatable (attachable-volumes-aws-ebs=26)") {
		t.Errorf("reason %q", r)
	}
}

// Karpenter's "should launch multiple nodes if required due to volume
// limits": an existing node whose CSINode allows 10 volumes, six pods with
// two claims each: five fit it (10 volumes), the sixth gets a new node.
// And "should launch a single node if all pods use the same PVC": 100 pods
// sharing one claim bring one volume (VolumeSet counts it for the first
// only) and all fit the existing node.
func TestVolumeLimitOnExistingNode(t *testing.T) {
	node := Node{Name: "n1", Labels: map[string]string{apiv1.LabelZone: "us-east-1a"}, NodePool: "p",
		Available: resources.List{resources.CPU: 64000, resources.Memory: 256 << 30, resources.Pods: 1024, resources.EBSVolumes: 10}}
	in := Input{Pods: ebsPods("two", 6, 2), NodePools: []NodePool{basicPool()}, ExistingNodes: []Node{node}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	if len(plan.ExistingPlacements) != 5 || len(plan.NewNodeClaims) != 1 || len(plan.NewNodeClaims[0].Pods) != 1 {
		t.Errorf("%d on the node, %d claims; want 5 and one claim for the sixth", len(plan.ExistingPlacements), len(plan.NewNodeClaims))
	}
	w := newVolWorld()
	w.ebsPV("pv-1", apiv1.LabelZone, "us-east-1a")
	w.claim("shared", "pv-1", "")
	seen := VolumeSet{}
	in.Pods = nil
	for i := 0; i < 100; i++ {
		p := PodWithVolumes(podWithClaims(fmt.Sprintf("s-%03d", i), "shared"), w.objs(), seen)
		p.Requests[resources.CPU], p.Requests[resources.Memory] = 10, 16<<20
		in.Pods = append(in.Pods, p)
	}
	if in.Pods[0].Requests[resources.EBSVolumes] != 1 || in.Pods[1].Requests[resources.EBSVolumes] != 0 {
		t.Fatalf("shared claim counted %d, %d; want 1 then 0", in.Pods[0].Requests[resources.EBSVolumes], in.Pods[1].Requests[resources.EBSVolumes])
	}
	plan = Solve(in)
	if len(plan.ExistingPlacements) != 100 || len(plan.NewNodeClaims) != 0 {
		t.Errorf("%d on the node, %d claims; want all 100 on it", len(plan.ExistingPlacements), len(plan.NewNodeClaims))
	}
}
