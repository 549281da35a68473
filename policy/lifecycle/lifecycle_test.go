package lifecycle

import (
	"reflect"
	"sort"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func claim() *apiv1.NodeClaim {
	return &apiv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-x7k2p", UID: "nc-uid",
			Labels: map[string]string{apiv1.LabelNodePool: "gpu", "team": "ml", apiv1.LabelInstanceType: "g4dn.12xlarge",
				apiv1.LabelCapacityType: "on-demand", "joinery.sh/provision-batch": "b1"},
			Annotations: map[string]string{"example.com/owner": "ml-platform", "joinery.sh/nominated-pods": "u1,u2"}},
		Spec: apiv1.NodeClaimSpec{
			Taints:        []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []corev1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}},
			Resources: apiv1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("8"), "nvidia.com/gpu": resource.MustParse("4")}},
		},
	}
}

// A kubelet that registered the Node with fewer labels and taints than
// the NodeClaim's: registration adds every NodeClaim label (Joinery's
// provision batch too, as Karpenter copies them all) and its annotations but
// Joinery's internal ones, keeps the kubelet's, removes the unregistered
// taint, and adds the finalizer and the owner reference.
func TestSyncNodeFromFewerLabelsAndTaints(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-9.ec2.internal",
			Labels:      map[string]string{apiv1.LabelHostname: "ip-10-0-1-9", apiv1.LabelInstanceType: "g4dn.12xlarge", "team": "kubelet-guess"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}},
	}
	nc := claim()
	if !SyncNode(node, nc) {
		t.Fatal("SyncNode reported no change")
	}
	wantLabels := map[string]string{apiv1.LabelHostname: "ip-10-0-1-9", apiv1.LabelInstanceType: "g4dn.12xlarge", "team": "ml",
		apiv1.LabelNodePool: "gpu", apiv1.LabelCapacityType: "on-demand", apiv1.LabelNodeRegistered: "true",
		"joinery.sh/provision-batch": "b1"}
	if !reflect.DeepEqual(node.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", node.Labels, wantLabels)
	}
	wantAnn := map[string]string{"node.alpha.kubernetes.io/ttl": "0", "example.com/owner": "ml-platform"}
	if !reflect.DeepEqual(node.Annotations, wantAnn) {
		t.Errorf("annotations = %v, want %v", node.Annotations, wantAnn)
	}
	var keys []string
	for _, tt := range node.Spec.Taints {
		keys = append(keys, tt.Key+":"+string(tt.Effect))
	}
	sort.Strings(keys)
	if want := []string{"example.com/agent-not-ready:NoSchedule", "nvidia.com/gpu:NoSchedule"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("taints = %v, want %v", keys, want)
	}
	if !reflect.DeepEqual(node.Finalizers, []string{apiv1.FinalizerTermination}) {
		t.Errorf("finalizers = %v", node.Finalizers)
	}
	if len(node.OwnerReferences) != 1 || node.OwnerReferences[0].Kind != "NodeClaim" || node.OwnerReferences[0].Name != nc.Name ||
		node.OwnerReferences[0].UID != "nc-uid" || node.OwnerReferences[0].APIVersion != "karpenter.sh/v1" {
		t.Errorf("owner references = %+v", node.OwnerReferences)
	}

	// The agent removes its startup taint; a repeated sync (a retried
	// activity) does not put it back, and changes nothing else.
	node.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
	if SyncNode(node, nc) {
		t.Errorf("second sync changed the node: taints %v", node.Spec.Taints)
	}
	if len(node.Spec.Taints) != 1 || len(node.Finalizers) != 1 || len(node.OwnerReferences) != 1 {
		t.Errorf("after a second sync: taints %v finalizers %v owners %v", node.Spec.Taints, node.Finalizers, node.OwnerReferences)
	}
}

// do-not-sync-taints leaves the node's taints to the provider, but the
// unregistered taint still goes.
func TestSyncNodeDoNotSyncTaints(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{apiv1.LabelDoNotSyncTaints: "true"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}}}
	SyncNode(node, claim())
	if len(node.Spec.Taints) != 0 {
		t.Errorf("taints = %v, want none", node.Spec.Taints)
	}
}

// Initialized waits for Ready, then the startup taint, then every
// requested resource (nvidia.com/gpu) in allocatable with a non-zero value.
func TestInitializedGates(t *testing.T) {
	nc := claim()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("47"), "nvidia.com/gpu": resource.MustParse("0")}}}
	check := func(wantOK bool, wantReason string) {
		t.Helper()
		ok, reason, msg := Initialized(node, nc)
		if ok != wantOK || reason != wantReason {
			t.Errorf("Initialized = %v %q (%s), want %v %q", ok, reason, msg, wantOK, wantReason)
		}
	}
	check(false, apiv1.ReasonNodeNotReady)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	check(false, apiv1.ReasonStartupTaintsExist)
	node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
	check(false, apiv1.ReasonEphemeralTaintsExist)
	node.Spec.Taints = []corev1.Taint{OpeningTaint}
	check(false, apiv1.ReasonStartupTaintsExist)
	node.Spec.Taints = nil
	check(false, apiv1.ReasonResourceNotRegistered) // the device plugin has not registered the GPUs (0)
	node.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("4")
	check(true, apiv1.ReasonInitialized)
	nc.Spec.Resources.Requests["aws.amazon.com/neuron"] = resource.MustParse("1")
	check(false, apiv1.ReasonResourceNotRegistered) // not in allocatable at all
}

// A registering node is held closed once; a registered one (a worker
// restarted, or registration retried after the taint was removed) is not
// closed again. EndOpening removes only the opening taint.
func TestHoldOpeningOnlyAtRegistration(t *testing.T) {
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{gpu}}}
	if !HoldOpening(node) || !Opening(node) || HoldOpening(node) {
		t.Fatalf("HoldOpening on a registering node: taints %v, want the opening taint once", node.Spec.Taints)
	}
	if !EndOpening(node) || Opening(node) || !reflect.DeepEqual(node.Spec.Taints, []corev1.Taint{gpu}) || EndOpening(node) {
		t.Fatalf("EndOpening: taints %v, want only %v", node.Spec.Taints, gpu)
	}
	node.Labels = map[string]string{apiv1.LabelNodeRegistered: "true"}
	if HoldOpening(node) || Opening(node) {
		t.Fatalf("a registered node closed again: %v", node.Spec.Taints)
	}
}
