package solver

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

func TestSimulateRemoval(t *testing.T) {
	pool := synthPool("p", 0, synth{name: "c2", cpu: 2000, memMiB: 4096, price: 0.1}, synth{name: "c8", cpu: 8000, memMiB: 16384, price: 0.4})
	node := func(name string, freeCPU int64, price float64) Node {
		return Node{Name: name, Labels: map[string]string{apiv1.LabelZone: "us-east-1a", apiv1.LabelHostname: name}, Price: price,
			Available: resources.List{resources.CPU: freeCPU, resources.Memory: 8 << 30, resources.Pods: 100}}
	}
	on := func(n string, p Pod) ExistingPod { return ExistingPod{Pod: p, Node: n, Zone: "us-east-1a"} }
	// big (0.4 $/h) runs one 1-CPU pod; small has 1.5 CPU free: delete big.
	in := Input{NodePools: []NodePool{pool}, ExistingNodes: []Node{node("big", 7000, 0.4), node("small", 1500, 0.1)},
		ExistingPods: []ExistingPod{on("big", pod("a", 1000, 512)), {Pod: pod("ds", 100, 64), Node: "big", Daemon: true}}}
	r := SimulateRemoval(in, []string{"big"})
	if !r.Possible || r.Replacement != nil || r.SavingUSDPerHour != 0.4 || len(r.Placements) != 1 || r.Placements[0].Node != "small" {
		t.Errorf("delete: %+v", r)
	}
	// Two 1-CPU pods: small cannot take both, one c2 replacement (0.1) saves 0.3.
	in.ExistingPods = append(in.ExistingPods, on("big", pod("b", 1000, 512)))
	r = SimulateRemoval(in, []string{"big"})
	if !r.Possible || r.Replacement == nil || r.Replacement.InstanceTypes[0].Type.Name != "c2" || r.SavingUSDPerHour < 0.299 || r.SavingUSDPerHour > 0.301 {
		t.Errorf("replace: %+v", r)
	}
	// Anti-affinity forces two new nodes: not possible.
	anti := func(name string) Pod {
		p := pod(name, 1800, 512)
		p.Labels = map[string]string{"app": "x"}
		p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: sel("x")}}}
		return p
	}
	in.ExistingPods = []ExistingPod{on("big", anti("x1")), on("big", anti("x2"))}
	if r = SimulateRemoval(in, []string{"big"}); r.Possible {
		t.Errorf("anti-affinity pods need two nodes, got %+v", r)
	}
	// A replacement as expensive as the candidate is no saving.
	in.ExistingNodes[0].Price = 0.1
	in.ExistingPods = []ExistingPod{on("big", pod("c", 1900, 512))}
	if r = SimulateRemoval(in, []string{"big"}); r.Possible || r.Reason == "" {
		t.Errorf("no saving: %+v", r)
	}
}

// FuzzSolve: random small inputs never panic and every pod is accounted for.
func FuzzSolve(f *testing.F) {
	f.Add(uint64(1), uint8(20), uint8(3))
	f.Add(uint64(99), uint8(200), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, n, existing uint8) {
		in := inputA(int(n)%250+5, seed)
		in.NodePools[0].InstanceTypes = in.NodePools[0].InstanceTypes[:int(seed%40)+1]
		for i := 0; i < int(existing)%4; i++ {
			in.ExistingNodes = append(in.ExistingNodes, Node{Name: string(rune('a' + i)), Labels: map[string]string{apiv1.LabelZone: testZones[i%3]},
				Available: resources.List{resources.CPU: int64(seed % 5000), resources.Memory: 4 << 30, resources.Pods: 10}, Price: 0.3})
			in.ExistingPods = append(in.ExistingPods, ExistingPod{Pod: in.Pods[i], Node: string(rune('a' + i)), Zone: testZones[i%3]})
		}
		plan := Solve(in)
		if got := len(plan.ExistingPlacements) + len(plan.Unschedulable) + podsInClaims(&plan); got != len(in.Pods) {
			t.Fatalf("%d pods accounted, want %d", got, len(in.Pods))
		}
		_ = SimulateRemoval(in, []string{"a"})
	})
}

func podsInClaims(p *Plan) int {
	n := 0
	for _, c := range p.NewNodeClaims {
		n += len(c.Pods)
	}
	return n
}
