package cluster

import (
	"testing"

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
