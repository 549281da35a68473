package activities

import (
	"context"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/internal/testobj"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Two m7i.large claims still launching hold a CPU-heavy and a memory-heavy
// pod; a third pod (1 CPU, 5 GiB) fits neither claim's leftover room, but
// all three fit the two claims packed again (the two nominees on one, the
// newcomer on the other). The plan buys nothing and nominates the three
// pods anew, each to one claim.
func TestPlanRepacksLaunchingClaimsBeforeBuying(t *testing.T) {
	ref := &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	gp := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "gp"}}
	gp.Spec.Template.Spec.NodeClassRef = ref
	gp.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m7i.large"}},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"on-demand"}}}
	claim := func(name, nominee string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "gp"},
			Annotations: map[string]string{capacity.AnnotationNominatedPods: nominee}},
			Spec: apiv1.NodeClaimSpec{NodeClassRef: ref, Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
				{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m7i.large"}},
				{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"on-demand"}},
				{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: []string{"us-east-1a"}}}}}
	}
	pending := func(name, cpu, mem string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: testobj.ResourceList("cpu", cpu, "memory", mem)}}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	}
	a := newFake(t, kubetest.World{Pools: []*apiv1.NodePool{gp}, Classes: []*apiv1.EC2NodeClass{testobj.ReadyNodeClass()},
		Claims: []*apiv1.NodeClaim{claim("gp-aaaaa", "uid-cpu"), claim("gp-bbbbb", "uid-mem")},
		Objects: []runtime.Object{pending("cpu", "1500m", "1Gi"), pending("mem", "200m", "5632Mi"), pending("newcomer", "1", "5Gi")}})
	out, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NodeClaims) != 0 || len(out.Unschedulable) != 0 {
		t.Fatalf("plan bought %d NodeClaims, %d unschedulable; want the launching claims to hold all three pods", len(out.NodeClaims), len(out.Unschedulable))
	}
	seen := map[string]string{}
	for _, name := range []string{"gp-aaaaa", "gp-bbbbb"} {
		u, err := a.cluster().Dynamic.Resource(apiv1.NodeClaimGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, uid := range strings.Split(u.GetAnnotations()[capacity.AnnotationNominatedPods], ",") {
			if prev, dup := seen[uid]; dup {
				t.Errorf("%s nominated to %s and %s", uid, prev, name)
			}
			seen[uid] = name
		}
	}
	if len(seen) != 3 || seen["uid-newcomer"] == "" || seen["uid-cpu"] != seen["uid-mem"] {
		t.Errorf("nominations %v, want the CPU- and memory-heavy pods on one claim, the newcomer on the other", seen)
	}
}
