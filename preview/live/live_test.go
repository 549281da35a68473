package live

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/testobj"
	"github.com/joinery/joinery/preview/whatif"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// Preview plans the change's NodePool in place of the cluster's (its
// instance types from the new requirements, the class's zones), keeps the
// cluster's in Before, reads the claims and prices the nodes, and writes
// nothing to the API server.
func TestPreviewPlansTheChangesPoolsAndWritesNothing(t *testing.T) {
	families := func(fs ...string) []apiv1.NodeSelectorRequirementWithMinValues {
		return []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpIn, Values: fs},
			{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"on-demand"}}}
	}
	ref := &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	gp := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
	gp.Spec.Template.Spec.NodeClassRef, gp.Spec.Template.Spec.Requirements = ref, families("c7i", "m7i")
	cls := testobj.ReadyNodeClass()
	labels := map[string]string{apiv1.LabelNodePool: "gp", apiv1.LabelInstanceType: "m7i.large", apiv1.LabelInstanceFamily: "m7i",
		apiv1.LabelCapacityType: "on-demand", apiv1.LabelZone: "us-east-1a"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-4.ec2.internal", Labels: labels},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "gp-abcde", Labels: labels}, Spec: apiv1.NodeClaimSpec{NodeClassRef: ref}}
	nc.Status.NodeName, nc.Status.ProviderID = node.Name, "aws:///us-east-1a/i-1"
	src := NewSource(activities.Deps{Catalog: catalog.MustDefault(), Log: zap.NewNop(), Cluster: kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{gp}, Claims: []*apiv1.NodeClaim{nc}, Classes: []*apiv1.EC2NodeClass{cls}, Objects: []runtime.Object{node}}).Cluster})
	kc, dc := src.Cluster.Kube.(*kubefake.Clientset), src.Cluster.Dynamic.(*dynfake.FakeDynamicClient)
	kc.ClearActions()
	dc.ClearActions()

	narrow := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
	narrow.Spec.Template.Spec.NodeClassRef, narrow.Spec.Template.Spec.Requirements = ref, families("c7i")
	changedClass := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: cls.Spec}
	changedClass.Spec.AMISelectorTerms = []apiv1.AMISelectorTerm{{ID: "ami-2"}}
	st := Preview(src, whatif.Change{NodePools: []*apiv1.NodePool{narrow}, NodeClasses: []*apiv1.EC2NodeClass{changedClass}}, time.Now())

	fams := func(in []string) map[string]bool {
		out := map[string]bool{}
		for _, n := range in {
			out[strings.SplitN(n, ".", 2)[0]] = true
		}
		return out
	}
	var before, after []string
	for _, o := range st.Before.NodePools[0].InstanceTypes {
		before = append(before, o.Type.Name)
	}
	for _, o := range st.After.NodePools[0].InstanceTypes {
		after = append(after, o.Type.Name)
		for _, off := range o.Offerings {
			if off.Zone != "us-east-1a" {
				t.Fatalf("%s offered in %s: want only the class's zone", o.Type.Name, off.Zone)
			}
		}
	}
	if f := fams(before); !f["c7i"] || !f["m7i"] || len(f) != 2 {
		t.Errorf("before: families %v", f)
	}
	if f := fams(after); !f["c7i"] || len(f) != 1 {
		t.Errorf("after: families %v, want c7i only", f)
	}
	if len(st.Claims) != 1 || st.Claims[0].Node == nil || st.Claims[0].Pool.Name != "gp" || st.Claims[0].Price <= 0 {
		t.Fatalf("claims %+v", st.Claims)
	}
	if len(st.Before.ExistingNodes) != 1 || st.Before.ExistingNodes[0].Price != st.Claims[0].Price {
		t.Errorf("existing nodes %+v, want the node at its claim's price %.4f", st.Before.ExistingNodes, st.Claims[0].Price)
	}
	if st.Pools["gp"].Nodes != 1 || st.Classes["default"] == nil {
		t.Errorf("pools %+v classes %v", st.Pools, st.Classes)
	}
	if len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "EC2NodeClass default: selector terms changed") {
		t.Errorf("notes %q", st.Notes)
	}
	for _, act := range append(kc.Actions(), dc.Actions()...) {
		if v := act.GetVerb(); v != "list" && v != "watch" && v != "get" {
			t.Errorf("Preview wrote: %s %s", v, act.GetResource().Resource)
		}
	}
}
