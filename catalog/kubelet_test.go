package catalog

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func exprClass(maxPods string, kubeReserved map[string]string) *apiv1.EC2NodeClass {
	nc := &apiv1.EC2NodeClass{}
	nc.Spec.AMISelectorTerms = []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}
	nc.Spec.Kubelet = &apiv1.KubeletConfiguration{KubeReserved: kubeReserved}
	if maxPods != "" {
		nc.Spec.Kubelet.MaxPods = ptr(intstr.FromString(maxPods))
	}
	return nc
}

// Expressions resolve per type: max_pods is the type's ENI default, cpu
// results are millicores rounded up to 10m, memory MiB rounded up to 16Mi.
func TestResolveKubeletPerType(t *testing.T) {
	c := MustDefault()
	nc := exprClass("min(max_pods, 30)", map[string]string{"cpu": "vcpus * 30", "memory": "memory_mib / 100", "ephemeral-storage": "1Gi"})
	for _, w := range []struct {
		name          string
		pods          int32
		cpu, memory   string
		allocCPU      int64
		allocMemoryMi int64
	}{
		// 8192 MiB less 7.5% VM overhead is 7577 MiB; less 96Mi reserved
		// and the 100Mi hard eviction threshold.
		{"m5.large", 29, "60m", "96Mi", 2000 - 60, 7577 - 96 - 100},
		// 65536 MiB: 655 MiB rounds up to 656Mi.
		{"m5.4xlarge", 30, "480m", "656Mi", 16000 - 480, 65536 - 4916 - 656 - 100},
	} {
		it, _ := c.Get(w.name)
		k, err := it.ResolveKubelet(LaunchOf(&nc.Spec))
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if n, ok := k.MaxPodsCount(); !ok || n != w.pods || k.KubeReserved["cpu"] != w.cpu || k.KubeReserved["memory"] != w.memory || k.KubeReserved["ephemeral-storage"] != "1Gi" {
			t.Errorf("%s: maxPods %d, kubeReserved %v; want %d, cpu %s memory %s", w.name, n, k.KubeReserved, w.pods, w.cpu, w.memory)
		}
		if nc.Spec.Kubelet.MaxPodsExpression() != "min(max_pods, 30)" {
			t.Fatal("resolving changed the class")
		}
		s := it.ShapeOf(LaunchOf(&nc.Spec))
		if s.Capacity[resources.Pods] != int64(w.pods) || s.Allocatable[resources.CPU] != w.allocCPU || s.Allocatable[resources.Memory]>>20 != w.allocMemoryMi {
			t.Errorf("%s: pods %d, allocatable cpu %dm memory %dMi; want %d, %dm, %dMi", w.name, s.Capacity[resources.Pods],
				s.Allocatable[resources.CPU], s.Allocatable[resources.Memory]>>20, w.pods, w.allocCPU, w.allocMemoryMi)
		}
	}
}

// podsPerCore caps max_pods as it caps the node's default.
func TestResolveKubeletMaxPodsSeesPodsPerCore(t *testing.T) {
	it, _ := MustDefault().Get("m5.large")
	nc := exprClass("max_pods + 1", nil)
	nc.Spec.Kubelet.PodsPerCore = ptr(int32(4))
	k, err := it.ResolveKubelet(LaunchOf(&nc.Spec))
	if n, _ := k.MaxPodsCount(); err != nil || n != 9 {
		t.Fatalf("maxPods %d, %v; want 2 vCPU × 4 + 1 = 9", n, err)
	}
}

// A result out of range leaves the type unlaunchable for the class, its
// name in the reason; the types it fits stay launchable.
func TestNegativeExpressionNamesTheType(t *testing.T) {
	c := MustDefault()
	nc := exprClass("max_pods - 100", nil)
	small, _ := c.Get("m5.large")
	if why := small.Unlaunchable(nc); !strings.Contains(why, "spec.kubelet.maxPods") || !strings.Contains(why, "evaluates to -71 for m5.large") {
		t.Errorf("m5.large unlaunchable %q", why)
	}
	big, _ := c.Get("m5.4xlarge")
	if why := big.Unlaunchable(nc); why != "" {
		t.Errorf("m5.4xlarge unlaunchable %q", why)
	}
	nc = exprClass("", map[string]string{"memory": "100 - memory_mib"})
	if why := small.Unlaunchable(nc); !strings.Contains(why, "spec.kubelet.kubeReserved[memory]") || !strings.Contains(why, "for m5.large, a negative reservation") {
		t.Errorf("negative reservation: %q", why)
	}
}
