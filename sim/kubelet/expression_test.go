package kubelet

import (
	"context"
	"encoding/json"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The node takes the values its user data carries, resolved from the
// class's expressions for its type, not a planning model: maxPods
// "min(max_pods, 20)" is 20 on m5.large, kubeReserved cpu "vcpus * 100"
// 200m and memory "memory_mib / 16" 512Mi; an unmanaged field rides along.
func TestExpressionResolvedValuesReachTheNode(t *testing.T) {
	ca := newCA(t, "cluster")
	it, _ := catalog.MustDefault().Get("m5.large")
	o := options(apiv1.AMIFamilyAL2023, ca)
	o.Kubelet.MaxPods = ptr(intstr.FromString("min(max_pods, 20)"))
	o.Kubelet.KubeReserved = map[string]string{"cpu": "vcpus * 100", "memory": "memory_mib / 16"}
	o.Kubelet.Other = map[string]json.RawMessage{"serializeImagePulls": json.RawMessage("false")}
	k, err := it.ResolveKubelet(catalog.Launch{Kubelet: o.Kubelet})
	if err != nil {
		t.Fatal(err)
	}
	o.Kubelet = k
	r, kc := registrar(t, ca)
	if err := r.Register(context.Background(), instance("m5.large", generate(t, o))); err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	// 7846 MiB the kernel sees, less 512Mi kube-reserved, 100Mi
	// system-reserved and the 200Mi eviction threshold.
	for name, want := range map[corev1.ResourceName]string{corev1.ResourcePods: "20", corev1.ResourceCPU: "1800m", corev1.ResourceMemory: "7034Mi"} {
		if got := n.Status.Allocatable[name]; got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, got.String(), want)
		}
	}
}
