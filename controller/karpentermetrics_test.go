package controller

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestKarpenterCollectorServesKarpentersGauges(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1.ec2.internal", CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{apiv1.LabelNodePool: "default", apiv1.LabelZone: "us-east-1a", apiv1.LabelInstanceType: "m7i.large",
			apiv1.LabelCapacityType: "spot", apiv1.LabelArch: "amd64", apiv1.LabelInstanceFamily: "m7i"}}}
	node.Status.Capacity = rl("cpu", "2", "memory", "8Gi", "pods", "29")
	node.Status.Allocatable = rl("cpu", "1930m", "memory", "7Gi", "pods", "29")
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: rl("cpu", cpu, "memory", mem)}
	}
	running := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	app := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-6b7c9"}}},
		Spec:   corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Resources: req("1", "1Gi")}}},
		Status: running}
	daemon := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-x", Namespace: "kube-system",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", Controller: new(true)}}},
		Spec:   corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Resources: req("100m", "128Mi")}}},
		Status: running}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: req("1", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Limits = rl("cpu", "100", "memory", "400Gi")
	np.Status.Resources = rl("cpu", "2", "memory", "8Gi", "pods", "29", "ephemeral-storage", "0", "nodes", "1")
	cl := kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{np}, Objects: []runtime.Object{node, app, daemon, pending}}).Cluster
	k := newKarpenterCollector(cl, func(*corev1.Node) float64 { return 0.0433 })
	k.now = func() time.Time { return created.Add(time.Hour) }
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(k)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	value := func(name string, match map[string]string) (float64, int) {
		total, n := 0.0, 0
	next:
		for _, m := range byName[name].GetMetric() {
			for k, v := range match {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			total += m.GetGauge().GetValue()
			n++
		}
		return total, n
	}
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"karpenter_nodes_allocatable", map[string]string{"resource_type": "cpu", "nodepool": "default", "instance_family": "m7i", "node_name": node.Name, "managed": "true"}, 1.93},
		{"karpenter_nodes_allocatable", map[string]string{"resource_type": "memory"}, 7 << 30},
		{"karpenter_nodes_total_pod_requests", map[string]string{"resource_type": "cpu"}, 1.1},
		{"karpenter_nodes_total_pod_requests", map[string]string{"resource_type": "pods"}, 2},
		{"karpenter_nodes_total_daemon_requests", map[string]string{"resource_type": "memory"}, 128 << 20},
		{"karpenter_nodes_system_overhead", map[string]string{"resource_type": "cpu"}, 0.07},
		{"karpenter_nodes_current_lifetime_seconds", map[string]string{"zone": "us-east-1a", "capacity_type": "spot"}, 3600},
		{"karpenter_pods_state", map[string]string{"name": "web-1", "owner": "/apis/apps/v1/namespaces/default/replicasets/web-6b7c9",
			"nodepool": "default", "instance_type": "m7i.large", "phase": "Running", "ready": "true", "scheduled": "true", "managed": "true", "state": "running"}, 1},
		{"karpenter_pods_state", map[string]string{"name": "web-2", "node": "", "scheduled": "false", "phase": "Pending", "managed": "false"}, 1},
		{"karpenter_pods_state", map[string]string{"state": "pending"}, 1},
		{"karpenter_nodepools_usage", map[string]string{"nodepool": "default", "resource_type": "ephemeral_storage"}, 0},
		{"karpenter_nodepools_usage", map[string]string{"nodepool": "default", "resource_type": "nodes"}, 1},
		{"karpenter_nodepools_limit", map[string]string{"nodepool": "default", "resource_type": "memory"}, 400 << 30},
		{"karpenter_nodepools_cost_total", map[string]string{"nodepool": "default"}, 0.0433},
		{"karpenter_cluster_state_node_count", nil, 1},
	} {
		got, n := value(c.name, c.match)
		if n == 0 || got-c.want > 1e-9 || c.want-got > 1e-9 {
			t.Errorf("%s%v = %v (%d series), want %v", c.name, c.match, got, n, c.want)
		}
	}
	if got, _ := value("karpenter_cluster_utilization_percent", map[string]string{"resource_type": "cpu"}); got < 56.99 || got > 57.0 {
		t.Errorf("cpu utilization %v%%, want 1.1/1.93 = 56.99%%", got)
	}
	if _, n := value("karpenter_pods_state", nil); n != 3 {
		t.Errorf("%d pods_state series, want 3", n)
	}
}
