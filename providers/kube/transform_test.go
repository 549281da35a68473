package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestStripManagedFields(t *testing.T) {
	mf := []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler", Operation: metav1.ManagedFieldsOperationUpdate}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: mf, Annotations: map[string]string{"karpenter.sh/do-not-disrupt": "true"}}}
	out, err := stripManagedFields(p)
	if err != nil || out.(*corev1.Pod).ManagedFields != nil || out.(*corev1.Pod).Annotations["karpenter.sh/do-not-disrupt"] != "true" {
		t.Fatalf("pod: err %v, managedFields %v, annotations %v", err, p.ManagedFields, p.Annotations)
	}
	u := &unstructured.Unstructured{}
	u.SetName("claim")
	u.SetManagedFields(mf)
	if _, err := stripManagedFields(u); err != nil || u.GetManagedFields() != nil {
		t.Fatalf("unstructured: err %v, managedFields %v", err, u.GetManagedFields())
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "default/web", Obj: p}
	if out, err := stripManagedFields(tomb); err != nil || out.(cache.DeletedFinalStateUnknown).Key != "default/web" {
		t.Fatalf("tombstone: %v %v", out, err)
	}
}

// Workload templates leave the cache, their selectors stay; a DaemonSet's
// template stays (a new node runs its pods).
func TestTrimForCache(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}
	ss := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: sel, Template: tmpl, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}}}}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "web"}, Template: &tmpl}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}
	for _, o := range []interface{}{rs, ss, rc, ds} {
		if _, err := trimForCache(o); err != nil {
			t.Fatal(err)
		}
	}
	if rs.Spec.Template.Spec.Containers != nil || rs.Spec.Selector != sel || ss.Spec.Template.Spec.Containers != nil || ss.Spec.VolumeClaimTemplates != nil ||
		ss.Spec.Selector != sel || rc.Spec.Template != nil || rc.Spec.Selector["app"] != "web" {
		t.Errorf("templates kept or selectors lost: %+v %+v %+v", rs.Spec, ss.Spec, rc.Spec)
	}
	if len(ds.Spec.Template.Spec.Containers) != 1 || ds.ManagedFields != nil {
		t.Errorf("DaemonSet: template %+v, managedFields %v", ds.Spec.Template, ds.ManagedFields)
	}
}

func TestReadManifestsNamesMigrateForV1beta1(t *testing.T) {
	_, err := parseManifests("old.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
spec: {}
`))
	want := "old.yaml document 2: karpenter.sh/v1beta1 NodePool default: convert it with `starter migrate -f old.yaml` (Joinery serves karpenter.sh/v1)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	objs, err := ParseManifests([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("v1: %v, %d objects", err, len(objs))
	}
}
