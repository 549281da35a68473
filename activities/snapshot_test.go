package activities

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// An in-flight NodeClaim's free capacity leaves room for the DaemonSet pods
// that will run on its node (not bound yet): the ones tolerating its taint
// and matching its arch, as the solver reserves them on new claims. A
// registered node's free capacity counts its bound DaemonSet pod once, as
// a used pod, and nothing more.
func TestSnapshotInFlightClaimLessDaemonSets(t *testing.T) {
	now := time.Now()
	res := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	ds := func(name string, tolerateAll bool, selector map[string]string, cpu, mem string) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Resources: res(cpu, mem)}}
		d.Spec.Template.Spec.NodeSelector = selector
		if tolerateAll {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}
		return d
	}
	agent := ds("agent", true, nil, "200m", "256Mi")                                          // runs everywhere
	armOnly := ds("arm-agent", true, map[string]string{apiv1.LabelArch: "arm64"}, "1", "1Gi") // not on m6i
	plain := ds("plain", false, nil, "1", "1Gi")                                              // does not tolerate the claim's taint

	taint := corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	inflight := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "batch-abcde",
		Labels:      map[string]string{apiv1.LabelNodePool: "batch"},
		Annotations: map[string]string{capacity.AnnotationNominatedPods: "uid-nominated"}},
		Spec: apiv1.NodeClaimSpec{Taints: []corev1.Taint{taint}, Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
			{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m6i.large", "m6i.xlarge"}},
			{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{"us-east-1a"}}}}}
	nominated := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nominated", UID: types.UID("uid-nominated")},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: res("500m", "512Mi")}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}

	// A registered Ready node with the agent's pod bound.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-7.ec2.internal", Labels: map[string]string{apiv1.LabelNodePool: "general"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	yes := true
	agentPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent-x", UID: "uid-agent-x",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u-agent", Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Resources: res("200m", "256Mi")}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}

	acts := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{inflight}, Objects: []runtime.Object{agent, armOnly, plain, nominated, node, agentPod}})
	snap, err := acts.snapshots.take(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]resources.List{}
	for _, n := range snap.input.ExistingNodes {
		got[n.Name] = n.Available
	}

	// The smaller type (m6i.large): allocatable, less agent (200m, 256Mi,
	// one pod slot), less the nominated pod (500m, 512Mi, one slot).
	large, _ := catalog.MustDefault().Get("m6i.large")
	want := large.Shape(nil, 20<<30).Allocatable.
		Sub(resources.List{resources.CPU: 200, resources.Memory: 256 << 20, resources.Pods: 1}).
		Sub(resources.List{resources.CPU: 500, resources.Memory: 512 << 20, resources.Pods: 1})
	if a := got["nodeclaim/"+inflight.Name]; a != want {
		t.Errorf("in-flight claim Available = %s, want %s (m6i.large allocatable %s less agent and the nominated pod)",
			a, want, large.Shape(nil, 20<<30).Allocatable)
	}
	// The same through the solver: its overhead for a new claim of the type.
	pool := solver.NodePool{Name: "batch", Taints: []corev1.Taint{taint},
		InstanceTypes: []solver.InstanceTypeOption{{Type: large, Shape: large.Shape(nil, 20<<30), Offerings: large.Offerings([]string{"us-east-1a"})}}}
	if oh := solver.DaemonSetOverhead(pool, snap.input.DaemonSets)[0]; oh != (resources.List{resources.CPU: 200, resources.Memory: 256 << 20, resources.Pods: 1}) {
		t.Errorf("solver overhead for m6i.large = %s, want only the agent's", oh)
	}

	// The registered node: allocatable less its bound pods, the agent once;
	// no CSINode, so no EBS attach limit.
	wantNode := resources.List{resources.CPU: 1800, resources.Memory: 4<<30 - 256<<20, resources.Pods: 19, resources.EBSVolumes: resources.NoLimit}
	if a := got[node.Name]; a != wantNode {
		t.Errorf("registered node Available = %s, want %s", a, wantNode)
	}
}

// The snapshot gives the solver what `starter plan` has: a pending pod's
// bound volume pins its zone (the PV's node affinity), an unbound
// WaitForFirstConsumer claim is steered by its StorageClass's
// allowedTopologies, a generic ephemeral volume is its <pod>-<volume>
// claim, and a claim that does not exist refuses the pod.
func TestSnapshotReadsPodVolumes(t *testing.T) {
	pending := func(name string, vols ...corev1.Volume) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}, Volumes: vols},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	}
	claimVol := func(claim string) corev1.Volume {
		return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	}
	gp3, wffc := "gp3", storagev1.VolumeBindingWaitForFirstConsumer
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-c"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: solver.EBSDriver, VolumeHandle: "vol-1"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1c"}}}}}}}}}
	bound := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bound"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-c", StorageClassName: &gp3}}
	unbound := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unbound"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &gp3}}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: solver.EBSDriver, VolumeBindingMode: &wffc,
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: apiv1.LabelEBSCSIZone, Values: []string{"us-east-1b"}}}}}}
	eph := pending("scratch", corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &gp3}}}}})
	yes := true
	ephClaim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "scratch-tmp",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "scratch", UID: eph.UID, Controller: &yes}}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-c", StorageClassName: &gp3}}

	acts := newFake(t, kubetest.World{Objects: []runtime.Object{pv, bound, unbound, sc, ephClaim, eph, pending("db", claimVol("bound")), pending("cache", claimVol("unbound")), pending("lost", claimVol("nope"))}})
	snap, err := acts.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]solver.Pod{}
	for _, p := range snap.input.Pods {
		got[p.Name] = p
	}
	zone := func(z string) [][]apiv1.NodeSelectorRequirementWithMinValues {
		return [][]apiv1.NodeSelectorRequirementWithMinValues{{{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{z}}}}
	}
	for name, want := range map[string][][]apiv1.NodeSelectorRequirementWithMinValues{"db": zone("us-east-1c"), "cache": zone("us-east-1b"), "scratch": zone("us-east-1c")} {
		if p := got[name]; !reflect.DeepEqual(p.VolumeRequirements, want) || p.Refused != "" {
			t.Errorf("pod %s: volume requirements %v refused %q, want %v", name, p.VolumeRequirements, p.Refused, want)
		}
	}
	if r := got["lost"].Refused; r != `persistentvolumeclaim "nope" not found` {
		t.Errorf("pod lost: refused %q", r)
	}
}

// A node's free EBS attachments are its CSINode's count less the EBS
// volumes attached to it, each once: two pods sharing a claim, a third
// pod's own volume, and a VolumeAttachment no pod uses (the kube-scheduler
// counts it too). A pending pod that shares a volume already attached
// brings no new one; a pending pod with its own claim brings one.
func TestSnapshotEBSAttachments(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-9.ec2.internal", Labels: map[string]string{apiv1.LabelNodePool: "general"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	count := int32(25)
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node.Name}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "efs.csi.aws.com", NodeID: "fs"}, {Name: solver.EBSDriver, NodeID: "i-0123", Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}}}
	gp3, wffc := "gp3", storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: solver.EBSDriver, VolumeBindingMode: &wffc}
	var objs []runtime.Object
	pv := func(name string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: solver.EBSDriver, VolumeHandle: "vol-" + name}}}}
	}
	claim := func(name, volume string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: &gp3}}
	}
	withClaim := func(name, nodeName, c string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c"}},
				Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}}}}}
		if nodeName == "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		} else {
			p.Status.Phase = corev1.PodRunning
		}
		return p
	}
	pvName := "pv-orphan"
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-orphan"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: solver.EBSDriver, NodeName: node.Name,
		Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}}}
	objs = append(objs, node, csiNode, sc, pv("pv-shared"), pv("pv-own"), pv(pvName), va,
		claim("shared", "pv-shared"), claim("own", "pv-own"), claim("new", ""),
		withClaim("a", node.Name, "shared"), withClaim("b", node.Name, "shared"), withClaim("c", node.Name, "own"),
		withClaim("pending-shared", "", "shared"), withClaim("pending-new", "", "new"))
	acts := newFake(t, kubetest.World{Objects: objs})
	snap, err := acts.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.input.ExistingNodes) != 1 {
		t.Fatalf("existing nodes %+v", snap.input.ExistingNodes)
	}
	// 25 less pv-shared, pv-own and pv-orphan.
	if got := snap.input.ExistingNodes[0].Available[resources.EBSVolumes]; got != 22 {
		t.Errorf("free EBS attachments %d, want 22 (25 less shared, own and the orphan attachment)", got)
	}
	got := map[string]int64{}
	for _, p := range snap.input.Pods {
		got[p.Name] = p.Requests[resources.EBSVolumes]
	}
	if got["pending-shared"] != 0 || got["pending-new"] != 1 {
		t.Errorf("pending pods' EBS volumes %v, want pending-shared 0 (already attached), pending-new 1", got)
	}
}

// A DaemonSet whose template names a RuntimeClass reserves its pods'
// requests plus the class's overhead on new nodes, as admission gives the
// DaemonSet's pods (the template itself carries none); one naming a class
// that does not exist runs no pods and reserves nothing.
func TestSnapshotDaemonSetRuntimeClassOverhead(t *testing.T) {
	ds := func(name, class string) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
		d.Spec.Template.Spec.RuntimeClassName = &class
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}}
		return d
	}
	kata := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("160Mi")}}}
	acts := newFake(t, kubetest.World{Objects: []runtime.Object{kata, ds("sandboxed", "kata"), ds("lost", "gvisor")}})
	snap, err := acts.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.input.DaemonSets; len(got) != 1 || got[0].Name != "sandboxed" ||
		got[0].Pod.Requests != (resources.List{resources.CPU: 350, resources.Memory: 224 << 20, resources.Pods: 1}) {
		t.Errorf("DaemonSets %+v, want sandboxed only, requesting 350m cpu and 224Mi (100m+250m, 64Mi+160Mi)", got)
	}
}

// A DaemonSet pod made for a registered node but not bound yet (the
// scheduler binds it once there is room) takes its room on that node: the
// plan does not give it to other pods.
func TestSnapshotKeepsRoomForPendingDaemonPods(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-8.ec2.internal", Labels: map[string]string{apiv1.LabelNodePool: "general"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	yes := true
	pinned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent-y", UID: "uid-agent-y",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u-agent", Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node.Name}}}}}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	acts := newFake(t, kubetest.World{Objects: []runtime.Object{node, pinned}})
	snap, err := acts.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := resources.List{resources.CPU: 1700, resources.Memory: 4<<30 - 128<<20, resources.Pods: 19, resources.EBSVolumes: resources.NoLimit}
	for _, n := range snap.input.ExistingNodes {
		if n.Name == node.Name && n.Available != want {
			t.Errorf("node Available = %s, want %s (allocatable less the DaemonSet pod made for it)", n.Available, want)
		}
	}
	if len(snap.input.ExistingNodes) != 1 || len(snap.input.Pods) != 0 {
		t.Errorf("%d existing nodes, %d pods to plan: want the node, and the DaemonSet pod not planned", len(snap.input.ExistingNodes), len(snap.input.Pods))
	}
}

// A pending pod pointed at a Ready node with room for it is the
// scheduler's: the plan leaves it out and keeps its room on that node.
func TestSnapshotKeepsRoomForHeldPods(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-8.ec2.internal", Labels: map[string]string{apiv1.LabelNodePool: "general"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("20")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	pending := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	}
	held, free := pending("held", "1500m"), pending("free", "1")
	held.Status.NominatedNodeName = node.Name
	acts := newFake(t, kubetest.World{Objects: []runtime.Object{node, held, free}})
	snap, err := acts.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if snap.held != 1 || len(snap.input.Pods) != 1 || snap.input.Pods[0].Name != "free" {
		t.Fatalf("held %d, pods to plan %v: want the pointed pod held and only the other planned", snap.held, snap.input.Pods)
	}
	if len(snap.input.ExistingNodes) != 1 || snap.input.ExistingNodes[0].Available[resources.CPU] != 500 {
		t.Fatalf("existing nodes %+v: want the node with 500m CPU left after the held pod", snap.input.ExistingNodes)
	}
}

// A NodeClaim whose Node has registered but is not initialized yet (not
// Ready, or a startup taint still on) is planned as in flight: its room is
// visible, bounded by what the registered Node reports, with the Node's
// labels and the taints it will have; only an initialized Node is an
// existing node by name. Before, the room on a wave's registered nodes
// was invisible for the seconds until Ready, and plans bought more.
func TestSnapshotSeesRegisteredBootingClaims(t *testing.T) {
	now := time.Now()
	claim := func(name, node string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{apiv1.LabelNodePool: "general", apiv1.LabelInstanceType: "m6i.large"}},
			Status: apiv1.NodeClaimStatus{NodeName: node}}
	}
	startup := corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	registered, tainted, open := claim("general-registered", "node-a"), claim("general-tainted", "node-b"), claim("general-open", "node-c")
	tainted.Spec.StartupTaints = []corev1.Taint{startup}
	node := func(name string, ready bool, taints ...corev1.Taint) *corev1.Node {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "general",
			apiv1.LabelInstanceType: "m6i.large", apiv1.LabelZone: "us-east-1a", "team": name}},
			Spec: corev1.NodeSpec{Taints: taints},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"),
				corev1.ResourceMemory: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("29")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
	}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "node-a"}, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	acts := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{registered, tainted, open},
		Objects: []runtime.Object{node("node-a", false, notReady), node("node-b", true, startup), node("node-c", true), pod}})
	snap, err := acts.snapshots.take(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]solver.Node{}
	for _, n := range snap.input.ExistingNodes {
		got[n.Name] = n
	}
	if len(got) != 3 || got["nodeclaim/general-registered"].Name == "" || got["nodeclaim/general-tainted"].Name == "" || got["node-c"].Name == "" {
		t.Fatalf("existing nodes %v: want the two booting claims in flight and node-c by name", slices.Collect(maps.Keys(got)))
	}
	a := got["nodeclaim/general-registered"]
	if a.Available[resources.CPU] != 1500 || a.Available[resources.Memory] >= 8<<30 || a.Labels["team"] != "node-a" || len(a.Taints) != 0 {
		t.Errorf("registered claim: available %s labels %v taints %v; want CPU as the Node reports (1500m), memory as an m6i.large's, the Node's labels, no taints",
			a.Available, a.Labels, a.Taints)
	}
	if b := got["nodeclaim/general-tainted"]; len(b.Taints) != 0 {
		t.Errorf("claim with its startup taint on: taints %v, want none (the startup taint goes at initialization)", b.Taints)
	}
	plan := solver.Solve(snap.input)
	if len(plan.ExistingPlacements) != 1 || plan.ExistingPlacements[0].Node != "nodeclaim/general-registered" || len(plan.NewNodeClaims) != 0 {
		t.Fatalf("plan placed %v, bought %d: want web on the registered claim", plan.ExistingPlacements, len(plan.NewNodeClaims))
	}
}
