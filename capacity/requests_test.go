package capacity

import (
	"testing"

	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

func podAsking(uid, rv, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID("u" + uid), ResourceVersion: rv},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// A pod's requests are read once per resourceVersion: a new version (an
// in-place resize) is read again, and a deleted pod's entry goes.
func TestPodRequestsOncePerVersion(t *testing.T) {
	r := newPodRequests(nil)
	if got := r.of(podAsking("1", "10", "500m"))[resources.CPU]; got != 500 {
		t.Fatalf("cpu %d, want 500", got)
	}
	// Same version: the cached value stands even if the object differs
	// (an informer never changes an object without a new version).
	if got := r.of(podAsking("1", "10", "2"))[resources.CPU]; got != 500 {
		t.Fatalf("same version read again: cpu %d, want the cached 500", got)
	}
	if got := r.of(podAsking("1", "11", "2"))[resources.CPU]; got != 2000 {
		t.Fatalf("new version: cpu %d, want 2000", got)
	}
	r.drop(cache.DeletedFinalStateUnknown{Obj: podAsking("1", "11", "2")})
	if len(r.byUID) != 0 {
		t.Fatalf("%d entries after the pod's deletion", len(r.byUID))
	}
	// No version (a pod built in memory): computed, never cached.
	if got := r.of(podAsking("2", "", "1"))[resources.CPU]; got != 1000 || len(r.byUID) != 0 {
		t.Fatalf("cpu %d, %d entries", got, len(r.byUID))
	}
}
