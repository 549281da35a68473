package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testobj"
	"github.com/joinery/joinery/policy/headroom"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// A NodePool's joinery.sh/headroom becomes virtual pods: those the node's
// free capacity holds are placed there (bound pods of the snapshot, the
// space taken), the rest are pending pods for the solver; a bad value
// plans nothing and says why, naming the annotation.
func TestSnapshotPlacesPoolHeadroom(t *testing.T) {
	ref := &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	cls := testobj.ReadyNodeClass()
	labels := map[string]string{apiv1.LabelNodePool: "gp", apiv1.LabelInstanceType: "m7i.large", apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1a"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-4.ec2.internal", Labels: labels},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	objs := []runtime.Object{node}
	for i := range 3 { // 1.5 of 2 CPUs used
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("100Mi")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	snapFor := func(annotation string) *snapshot {
		gp := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp", Annotations: map[string]string{headroom.AnnotationPoolHeadroom: annotation}}}
		gp.Spec.Template.Spec.NodeClassRef = ref
		gp.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: []string{"m7i"}}}
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "gp-abcde", Labels: labels}, Spec: apiv1.NodeClaimSpec{NodeClassRef: ref}}
		nc.Status.NodeName = node.Name
		nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
		a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{gp}, Claims: []*apiv1.NodeClaim{nc}, Classes: []*apiv1.EC2NodeClass{cls}, Objects: objs})
		s, err := a.snapshots.take(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// 100%: 3 virtual pods of the average 500m; one fits the free 500m.
	s := snapFor("100%")
	if len(s.buffers) != 1 || s.buffers[0].err != nil || len(s.buffers[0].pods) != 3 {
		t.Fatalf("buffers %+v", s.buffers)
	}
	if got := s.bufferOnNode[node.Name]; got != 1 || len(s.bufferPlaced["nodepool/gp"]) != 1 || s.virtualPending != 2 {
		t.Fatalf("on node %d, placed %v, pending %d; want 1, 1, 2", got, s.bufferPlaced, s.virtualPending)
	}
	var pending, virtualBound int
	for _, p := range s.input.Pods {
		if s.virtualKeys[p.Key()] {
			pending++
			if p.Requests[resources.CPU] != 500 || p.NodeSelector[apiv1.LabelNodePool] != "gp" {
				t.Errorf("virtual pod %s: %v %v", p.Key(), p.Requests, p.NodeSelector)
			}
		}
	}
	for _, ep := range s.input.ExistingPods {
		if isVirtualUID(ep.Pod.UID) {
			virtualBound++
		}
	}
	if pending != 2 || virtualBound != 1 || len(s.input.Pods) != 2 {
		t.Errorf("pending virtual %d (of %d pods), bound virtual %d; want 2, 2, 1", pending, len(s.input.Pods), virtualBound)
	}
	if av := s.input.ExistingNodes[0].Available; av[resources.CPU] != 0 {
		t.Errorf("node free cpu %d after the buffer, want 0", av[resources.CPU])
	}
	// 34%: ceil(3 x 34%) = 2 virtual pods; one fits.
	if s := snapFor("34%"); len(s.buffers[0].pods) != 2 || s.virtualPending != 1 {
		t.Errorf("34%%: %d virtual pods, %d pending; want 2, 1", len(s.buffers[0].pods), s.virtualPending)
	}
	// A bad value: nothing planned, the error names the annotation.
	s = snapFor("ten")
	if len(s.buffers) != 1 || s.buffers[0].err == nil || !strings.Contains(s.buffers[0].err.Error(), headroom.AnnotationPoolHeadroom) || s.virtualPending != 0 || len(s.virtualKeys) != 0 {
		t.Fatalf("bad annotation: %+v", s.buffers[0])
	}
}
