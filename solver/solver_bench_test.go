package solver

import (
	"fmt"
	"testing"

	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// benchPods makes n pods of mixed shapes, deterministic: web (500m/512Mi),
// api (1/2Gi), worker (2/4Gi), cache on the memory pool (2/16Gi, tolerating
// its taint, on-demand), batch on arm64 (3/6Gi, tolerating the arch taint),
// sidecar-heavy jobs (250m/256Mi), and one 1-GPU pod in a hundred.
func benchPods(n int) []Pod {
	type shape struct {
		name string
		cpu  int64 // millicores
		mem  int64 // MiB
		gpu  int64
		sel  map[string]string
		tols []corev1.Toleration
	}
	shapes := []shape{
		{name: "web", cpu: 500, mem: 512},
		{name: "api", cpu: 1000, mem: 2048},
		{name: "worker", cpu: 2000, mem: 4096},
		{name: "cache", cpu: 2000, mem: 16384, sel: map[string]string{"karpenter.sh/capacity-type": "on-demand"},
			tols: []corev1.Toleration{{Key: "workload-type", Value: "memory-intensive", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "batch", cpu: 3000, mem: 6144, sel: map[string]string{"kubernetes.io/arch": "arm64"},
			tols: []corev1.Toleration{{Key: "arch", Value: "arm64", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "job", cpu: 250, mem: 256},
		{name: "web", cpu: 500, mem: 512},
		{name: "api", cpu: 1000, mem: 2048},
	}
	pods := make([]Pod, 0, n)
	for i := 0; i < n; i++ {
		s := shapes[i%len(shapes)]
		if i%100 == 99 {
			s = shape{name: "train", cpu: 4000, mem: 16384, gpu: 1,
				tols: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
		}
		var r resources.List
		r[resources.CPU], r[resources.Memory], r[resources.NvidiaGPU], r[resources.Pods] = s.cpu, s.mem<<20, s.gpu, 1
		pods = append(pods, Pod{Namespace: "bench", Name: fmt.Sprintf("%s-%05d", s.name, i), Requests: r,
			NodeSelector: s.sel, Tolerations: s.tols, CreationUnix: 1_700_000_000 + int64(i%7)})
	}
	return pods
}

// benchPools are the example NodePools with their limits raised 100x, so a
// batch of thousands of pods is limited by packing, not by the limits.
func benchPools(b testing.TB) []NodePool {
	pools := examplePools(b)
	for i := range pools {
		for r := range pools[i].Limits {
			pools[i].Limits[r] *= 100
		}
	}
	return pools
}

func BenchmarkSolve(b *testing.B) {
	pools := benchPools(b)
	ds := []DaemonSet{{Namespace: "kube-system", Name: "node-agent", Pod: Pod{
		Requests:    resources.List{resources.CPU: 100, resources.Memory: 128 << 20, resources.Pods: 1},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}}}
	for _, n := range []int{1000, 5000} {
		pods := benchPods(n)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			var plan Plan
			for b.Loop() {
				plan = Solve(Input{Pods: pods, NodePools: pools, DaemonSets: ds})
			}
			if len(plan.Unschedulable) > 0 {
				b.Fatalf("%d unschedulable, first: %+v", len(plan.Unschedulable), plan.Unschedulable[0])
			}
			b.ReportMetric(float64(len(plan.NewNodeClaims)), "nodes")
			b.ReportMetric(plan.Price(), "$/hour")
		})
	}
}

// volumePods are n StatefulSet-like pods (250m/1Gi), each with its own EBS
// volume bound in one of three zones (as VolumesOf reads a PV's node
// affinity), so each node holds at most its type's attach limit of them.
func volumePods(n int) []Pod {
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	out := make([]Pod, 0, n)
	for i := 0; i < n; i++ {
		var r resources.List
		r[resources.CPU], r[resources.Memory], r[resources.Pods], r[resources.EBSVolumes] = 250, 1<<30, 1, 1
		out = append(out, Pod{Namespace: "bench", Name: fmt.Sprintf("db-%05d", i), Requests: r, CreationUnix: 1_700_000_000,
			Labels:             map[string]string{"app": "db"},
			VolumeRequirements: [][]req{{{Key: "topology.kubernetes.io/zone", Operator: "In", Values: []string{zones[i%3]}}}}})
	}
	return out
}

// BenchmarkSolveVolumes: 5,000 pods with a volume each (zone-pinned, the
// attach limit binding before cpu and memory), under the default budget.
// go test -run xxx -bench SolveVolumes ./solver/
func BenchmarkSolveVolumes(b *testing.B) {
	in := Input{Pods: volumePods(5000), NodePools: benchPools(b)}
	benchSolve(b, in)
}
