package activities

import (
	"context"
	"reflect"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/solver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// With --scheduler-config's defaults, the snapshot gives a pending pod of
// ReplicaSet web-5d8f without constraints the zone default, selecting what
// its ReplicaSet (read from the informer, template stripped) selects; a
// pending pod with its own constraints keeps them; a bound pod of the
// ReplicaSet gets the default too (it is rescheduled like a new pod when
// its node is removed).
func TestSnapshotAppliesSpreadDefaults(t *testing.T) {
	yes := true
	pending := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}
	webPod := func(name, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			Labels:          map[string]string{"app": "web", "pod-template-hash": "5d8f"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f", UID: "u-rs", Controller: &yes}}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c"}}}}
		if node == "" {
			p.Status.Conditions = []corev1.PodCondition{pending}
		} else {
			p.Status.Phase = corev1.PodRunning
		}
		return p
	}
	own := []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	withOwn := webPod("web-5d8f-own", "")
	withOwn.Spec.TopologySpreadConstraints = own
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-5d8f"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "5d8f"}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-5.ec2.internal"}}

	spread := solver.SpreadDefaults{corev1.DefaultSchedulerName: {{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule}}}
	a := newFake(t, kubetest.World{Prepare: (*kube.Cluster).WatchSpreadSelectors, Objects: []runtime.Object{rs, node, webPod("web-5d8f-a", ""), withOwn, webPod("web-5d8f-b", node.Name)}},
		func(d *Deps) { d.SpreadDefaults = spread })
	snap, err := a.snapshots.take(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
		{Key: "pod-template-hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"5d8f"}}}}
	zone := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel}}
	got := map[string][]corev1.TopologySpreadConstraint{}
	for _, p := range snap.input.Pods {
		got[p.Name] = p.TopologySpread
	}
	for _, ep := range snap.input.ExistingPods {
		got[ep.Pod.Name] = ep.Pod.TopologySpread
	}
	want := map[string][]corev1.TopologySpreadConstraint{"web-5d8f-a": zone, "web-5d8f-own": own, "web-5d8f-b": zone}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spread by pod %+v,\nwant %+v", got, want)
	}
}
