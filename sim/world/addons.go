package world

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// eksAddons are the DaemonSets every EKS cluster runs on every node, as
// its default add-ons install them: the VPC CNI's aws-node and kube-proxy,
// both hostNetwork (they take no pod address: the "+2" of the ENI max
// pods is theirs) with their CPU requests. Joinery sees them as it would
// on EKS: two pods and 125m of every node.
var eksAddons = []struct {
	name string
	cpu  string
}{{"aws-node", "25m"}, {"kube-proxy", "100m"}}

// installEKSAddons creates the add-on DaemonSets in kube-system (kept as
// they are when a resumed world has them).
func installEKSAddons(ctx context.Context, kc kubernetes.Interface) error {
	for _, a := range eksAddons {
		ds := eksAddon(a.name, a.cpu)
		if _, err := kc.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("add-on %s: %w", a.name, err)
		}
	}
	return nil
}

func eksAddon(name, cpu string) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:       true,
					PriorityClassName: "system-node-critical",
					Tolerations:       []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					NodeSelector:      map[string]string{corev1.LabelOSStable: "linux"},
					Containers: []corev1.Container{{Name: name, Image: "public.ecr.aws/eks/" + name,
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
				},
			},
		},
	}
}
