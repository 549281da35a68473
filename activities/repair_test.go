package activities

import (
	"context"
	"testing"

	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func TestDeleteNodePodsDeletesAllButMirrorPodsAtOnce(t *testing.T) {
	node, _ := testNode()
	pod := func(name, nodeName string, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: ann},
			Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	objs := []runtime.Object{node, pod("web", node.Name, nil), pod("job", node.Name, map[string]string{"karpenter.sh/do-not-disrupt": "true"}),
		pod("static", node.Name, map[string]string{corev1.MirrorPodAnnotationKey: "x"}), pod("elsewhere", "other", nil)}
	f := kubetest.Start(t, kubetest.World{Objects: objs})
	a := New(Deps{Cluster: f.Cluster, Log: zap.NewNop()})
	n, err := a.Drain.DeleteNodePods(context.Background(), node.Name)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want web and job", n, err)
	}
	for name, gone := range map[string]bool{"web": true, "job": true, "static": false, "elsewhere": false} {
		_, err := f.Kube.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) != gone {
			t.Errorf("pod %s: get %v, want gone %v", name, err, gone)
		}
	}
	// The fake deletes at once; the real API server does too, with grace 0.
	for _, act := range f.Kube.Actions() {
		if act.GetVerb() == "delete" && act.GetResource().Resource == "pods" {
			if opts := act.(interface{ GetDeleteOptions() metav1.DeleteOptions }).GetDeleteOptions(); opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
				t.Errorf("delete options %+v, want grace 0", opts)
			}
		}
	}
}
