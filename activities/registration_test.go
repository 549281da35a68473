package activities

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A kubelet registers the Node with fewer labels and taints than the
// NodeClaim's and without the GPUs in allocatable (the device plugin is
// not up): registration writes exactly the NodeClaim's labels and taints
// (plus the kubelet's own), the finalizer and the owner reference;
// Initialized stays Unknown (ResourceNotRegistered) until nvidia.com/gpu
// shows in allocatable, and only then does the activity return.
func TestRegistrationSyncsTheNodeAndExtendedResourcesGateInitialized(t *testing.T) {
	const pid = "aws:///us-east-1a/i-0gpu"
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-2-3.ec2.internal", Labels: map[string]string{apiv1.LabelHostname: "ip-10-0-2-3"}},
		Spec:       corev1.NodeSpec{ProviderID: pid, Taints: []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("47"), corev1.ResourceMemory: resource.MustParse("180Gi")}},
	}
	nc := &apiv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-k2m9z", UID: "uid-gpu-k2m9z",
			Labels:      map[string]string{apiv1.LabelNodePool: "gpu", "team": "ml", apiv1.LabelInstanceType: "g4dn.12xlarge", LabelProvisionBatch: "b"},
			Annotations: map[string]string{"example.com/owner": "ml", capacity.AnnotationNominatedPods: "u1"}},
		Spec: apiv1.NodeClaimSpec{
			Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}},
			Resources: apiv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"),
				"nvidia.com/gpu": resource.MustParse("4")}},
		},
		Status: apiv1.NodeClaimStatus{ProviderID: pid},
	}
	a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{nc}, Objects: []runtime.Object{node}})
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Lifecycle.WaitForNodeReady, activity.RegisterOptions{Name: workflows.ActivityWaitForNode})

	// The scheduler hints (controller): once Joinery says it waits for the
	// opening taint it added at registration, they open the node. The device
	// plugin: once Joinery says it waits for the GPUs, they appear.
	plugin := make(chan error, 1)
	opened := false
	go func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got, err := a.cluster().NodeClaim(t.Context(), nc.Name)
			if err != nil {
				continue
			}
			c := apiv1.FindCondition(got.Status.Conditions, apiv1.ConditionInitialized)
			if c != nil && c.Reason == apiv1.ReasonStartupTaintsExist && !opened {
				if err := a.cluster().UpdateNode(t.Context(), node.Name, lifecycle.EndOpening); err != nil {
					plugin <- err
					return
				}
				opened = true
			}
			if c == nil || c.Reason != apiv1.ReasonResourceNotRegistered {
				continue
			}
			if c.Status != metav1.ConditionUnknown {
				plugin <- nil
				return
			}
			n, err := a.cluster().Kube.CoreV1().Nodes().Get(t.Context(), node.Name, metav1.GetOptions{})
			if err != nil {
				plugin <- err
				return
			}
			n.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("4")
			_, err = a.cluster().Kube.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{})
			plugin <- err
			return
		}
		plugin <- nil
	}()
	v, err := env.ExecuteActivity(workflows.ActivityWaitForNode, workflows.NodeClaimLaunched{NodeClaim: nc.Name, Instance: workflows.Instance{ID: "i-0gpu", ProviderID: pid}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-plugin; err != nil {
		t.Fatal(err)
	}
	var res workflows.NodeReady
	if err := v.Get(&res); err != nil || res.NodeName != node.Name {
		t.Fatalf("result %+v, err %v", res, err)
	}
	n, _ := a.cluster().Kube.CoreV1().Nodes().Get(t.Context(), node.Name, metav1.GetOptions{})
	wantLabels := map[string]string{apiv1.LabelHostname: "ip-10-0-2-3", apiv1.LabelNodePool: "gpu", "team": "ml",
		apiv1.LabelInstanceType: "g4dn.12xlarge", apiv1.LabelNodeRegistered: "true", apiv1.LabelNodeInitialized: "true",
		LabelProvisionBatch: "b"}
	if !reflect.DeepEqual(n.Labels, wantLabels) {
		t.Errorf("node labels = %v, want %v", n.Labels, wantLabels)
	}
	if !reflect.DeepEqual(n.Annotations, map[string]string{"example.com/owner": "ml"}) {
		t.Errorf("node annotations = %v", n.Annotations)
	}
	var taints []string
	for _, tt := range n.Spec.Taints {
		taints = append(taints, tt.Key+":"+string(tt.Effect))
	}
	sort.Strings(taints)
	if !reflect.DeepEqual(taints, []string{"nvidia.com/gpu:NoSchedule"}) {
		t.Errorf("node taints = %v, want exactly the NodeClaim's", taints)
	}
	if !reflect.DeepEqual(n.Finalizers, []string{apiv1.FinalizerTermination}) || len(n.OwnerReferences) != 1 ||
		n.OwnerReferences[0].Name != nc.Name || n.OwnerReferences[0].UID != nc.UID {
		t.Errorf("finalizers %v owner references %+v", n.Finalizers, n.OwnerReferences)
	}
	if !opened {
		t.Error("the node registered open: want it closed by the opening taint until its pods are pointed")
	}
	got, _ := a.cluster().NodeClaim(t.Context(), nc.Name)
	for _, c := range []string{apiv1.ConditionRegistered, apiv1.ConditionInitialized, apiv1.ConditionReady} {
		if !apiv1.IsConditionTrue(got.Status.Conditions, c) {
			t.Errorf("condition %s not True: %+v", c, got.Status.Conditions)
		}
	}
}

// A node launched for pods registers closed; when nothing opens it (the
// scheduler hints' leader is gone), its own activity opens it once it has
// been Ready and closed for the opening deadline, and the node initializes.
func TestAClosedNodeOpensAtItsDeadline(t *testing.T) {
	const pid = "aws:///us-east-1a/i-0closed"
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-2-4.ec2.internal"},
		Spec:       corev1.NodeSpec{ProviderID: pid, Taints: []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	nc := &apiv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "web-x7k2p", UID: "uid-web-x7k2p", Labels: map[string]string{apiv1.LabelNodePool: "web"},
			Annotations: map[string]string{capacity.AnnotationNominatedPods: "u1"}},
		Status: apiv1.NodeClaimStatus{ProviderID: pid},
	}
	a := newFake(t, kubetest.World{Claims: []*apiv1.NodeClaim{nc}, Objects: []runtime.Object{node}})
	a.Lifecycle.openingDeadline = 500 * time.Millisecond
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second) // the activity would wait forever
	defer cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	env.RegisterActivityWithOptions(a.Lifecycle.WaitForNodeReady, activity.RegisterOptions{Name: workflows.ActivityWaitForNode})

	closed := make(chan bool, 1) // whether the node was ever seen closed
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if n, err := a.cluster().Kube.CoreV1().Nodes().Get(t.Context(), node.Name, metav1.GetOptions{}); err == nil && lifecycle.Opening(n) {
				closed <- true
				return
			}
		}
		closed <- false
	}()
	start := time.Now()
	if _, err := env.ExecuteActivity(workflows.ActivityWaitForNode, workflows.NodeClaimLaunched{NodeClaim: nc.Name,
		Instance: workflows.Instance{ID: "i-0closed", ProviderID: pid}}); err != nil {
		t.Fatal(err)
	}
	if !<-closed {
		t.Error("the node never registered closed")
	}
	if took := time.Since(start); took < a.Lifecycle.openingDeadline {
		t.Errorf("initialized after %s, before the opening deadline", took)
	}
	n, _ := a.cluster().Kube.CoreV1().Nodes().Get(t.Context(), node.Name, metav1.GetOptions{})
	if lifecycle.Opening(n) || n.Labels[apiv1.LabelNodeInitialized] != "true" {
		t.Errorf("node taints %v labels %v: want it open and initialized", n.Spec.Taints, n.Labels)
	}
}
