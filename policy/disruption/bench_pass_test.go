package disruption_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The consolidation pass benchmark: one disruption.Decide (emptiness,
// drift, expiration, multi-node, single-node) with the real
// solver.SimulateRemoval over a cluster of passNodes nodes and passPods
// pods grown from the real catalog (see passCluster).
//
//	go test -run xxx -bench Pass -benchmem -count 6 ./disruption/
const (
	passNodes = 1000
	passPods  = 10000
)

var benchT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// passShapes are the clusters the pass runs over: underutilized (a
// scale-down left every node partly used: multi-node consolidation acts)
// and packed (grown to the same size and not scaled down: little or
// nothing moves, so every method runs to its end, the worst case).
var passShapes = []string{"underutilized", "packed"}

// benchCluster is a grown cluster: the solver input of a pass and the
// NodeClaims candidate filtering reads.
type benchCluster struct {
	in     solver.Input
	claims []disruption.Claim
	pods   int // non-DaemonSet pods
}

// passPool is an API NodePool that consolidates at once, default budget (10%).
func passPool(name string, weight int32, taint string, reqs ...apiv1.NodeSelectorRequirementWithMinValues) *apiv1.NodePool {
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Weight = &weight
	np.Spec.Template.Spec.Requirements = reqs
	if taint != "" {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: taint, Value: name, Effect: corev1.TaintEffectNoSchedule}}
	}
	np.Spec.Disruption.ConsolidationPolicy = apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = "0s"
	return np
}

// passWorkload is one Deployment or StatefulSet: replicas identical pods.
type passWorkload struct {
	kind         string // web, batch, memory, arm (the solver's mixed input)
	name         string
	replicas     int
	cpu, memMiB  int64
	spread, dedi bool
}

// nextWorkload draws a workload of the solver benchmarks' mixed input
// (solver/bench_mixed_test.go: web ~40%, batch ~40%, memory ~15%, arm
// ~5%), smaller replica counts so a cluster grows in many batches.
func nextWorkload(rng *rand.Rand, i int) passWorkload {
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	w := passWorkload{}
	switch r := rng.IntN(100); {
	case r < 40:
		w = passWorkload{kind: "web", replicas: 5 + rng.IntN(26), cpu: pick(250, 500, 750, 1000), memMiB: pick(256, 512, 1024, 2048), spread: true}
	case r < 80:
		w = passWorkload{kind: "batch", replicas: 5 + rng.IntN(26), cpu: pick(500, 1000, 2000), memMiB: pick(1024, 2048, 4096)}
	case r < 95:
		w = passWorkload{kind: "memory", replicas: 2 + rng.IntN(9), cpu: pick(1000, 2000), memMiB: pick(8192, 16384, 32768), dedi: true}
	default:
		w = passWorkload{kind: "arm", replicas: 5 + rng.IntN(16), cpu: pick(500, 1000), memMiB: pick(1024, 2048)}
	}
	w.name = fmt.Sprintf("%s-%04d", w.kind, i)
	return w
}

func (w passWorkload) pod(r int, created int64) solver.Pod {
	p := solver.Pod{Namespace: w.kind, Name: fmt.Sprintf("%s-%04d", w.name, r), CreationUnix: created,
		Labels: map[string]string{"app": w.name}}
	p.UID = p.Namespace + "-" + p.Name
	p.Requests[resources.CPU], p.Requests[resources.Memory], p.Requests[resources.Pods] = w.cpu, w.memMiB<<20, 1
	switch w.kind {
	case "web":
		p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelZone,
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels}}}
	case "memory":
		p.NodeSelector = map[string]string{apiv1.LabelNodePool: "memory"}
		p.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "memory", Effect: corev1.TaintEffectNoSchedule}}
	case "arm":
		p.NodeSelector = map[string]string{apiv1.LabelArch: "arm64"}
	}
	return p
}

var (
	clustersMu sync.Mutex
	clusters   = map[string]*benchCluster{}
)

// passCluster grows a cluster the way a real one grows: workloads arrive
// one at a time and each is provisioned by solver.Solve (its first plan)
// onto the free room of the existing nodes plus new nodes, each launched
// as its plan's cheapest type and offering, until there are nodes nodes.
// Then, for "underutilized", random pods go away (a scale-down, never a
// node's last pod, so emptiness has nothing to do) until pods remain; for
// "packed" the cluster stays as grown (its pod count is whatever the
// growth placed). Deterministic; built once per process.
func passCluster(tb testing.TB, shape string, nodes, pods int) *benchCluster {
	clustersMu.Lock()
	defer clustersMu.Unlock()
	key := fmt.Sprintf("%s/%d/%d", shape, nodes, pods)
	if c, ok := clusters[key]; ok {
		return c
	}
	cat := catalog.MustDefault()
	in := func(k string, v ...string) apiv1.NodeSelectorRequirementWithMinValues {
		return apiv1.NodeSelectorRequirementWithMinValues{Key: k, Operator: apiv1.OpIn, Values: v}
	}
	api := []*apiv1.NodePool{
		passPool("general", 100, "", in(apiv1.LabelCapacityType, apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand),
			in(apiv1.LabelInstanceCategory, "c", "m", "r"),
			apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelInstanceGen, Operator: apiv1.OpGt, Values: []string{"5"}},
			in(apiv1.LabelArch, "amd64", "arm64")),
		passPool("memory", 50, "dedicated", in(apiv1.LabelCapacityType, apiv1.CapacityTypeOnDemand), in(apiv1.LabelInstanceCategory, "r")),
	}
	poolByName := map[string]*apiv1.NodePool{}
	var sin solver.Input
	for _, np := range api {
		poolByName[np.Name] = np
		sp := solver.NodePoolFromAPI(np, nil, cat, catalog.DefaultZones, nil)
		if len(sp.InstanceTypes) == 0 {
			tb.Fatalf("pool %s has no types", np.Name)
		}
		sin.NodePools = append(sin.NodePools, sp)
	}
	ds := solver.DaemonSet{Namespace: "kube-system", Name: "node-agent", Pod: solver.Pod{
		Requests:    resources.List{resources.CPU: 150, resources.Memory: 200 << 20, resources.Pods: 1},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	sin.DaemonSets = []solver.DaemonSet{ds}

	rng := rand.New(rand.NewPCG(18, 1))
	nodeIdx := map[string]int{}
	price := map[string]float64{}
	for wi := 0; len(sin.ExistingNodes) < nodes; wi++ {
		w := nextWorkload(rng, wi)
		batch := solver.Input{NodePools: sin.NodePools, DaemonSets: sin.DaemonSets, ExistingNodes: sin.ExistingNodes,
			ExistingPods: sin.ExistingPods, Budget: time.Nanosecond}
		byKey := map[string]solver.Pod{}
		for r := 0; r < w.replicas; r++ {
			p := w.pod(r, 1_700_000_000+int64(wi))
			batch.Pods = append(batch.Pods, p)
			byKey[p.Namespace+"/"+p.Name] = p
		}
		plan := solver.Solve(batch)
		if len(plan.Unschedulable) > 0 {
			tb.Fatalf("growth: %s unschedulable: %s", plan.Unschedulable[0].Pod, plan.Unschedulable[0].Reason)
		}
		place := func(p solver.Pod, node string) {
			n := &sin.ExistingNodes[nodeIdx[node]]
			n.Available = n.Available.Sub(p.Requests)
			sin.ExistingPods = append(sin.ExistingPods, solver.ExistingPod{Pod: p, Node: node, Zone: n.Labels[apiv1.LabelZone]})
		}
		for _, pl := range plan.ExistingPlacements {
			place(byKey[pl.Pod], pl.Node)
		}
		for _, nc := range plan.NewNodeClaims {
			it := nc.InstanceTypes[0]
			off := solver.CheapestOffering(it.Offerings)
			name := fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", len(sin.ExistingNodes)/65536, len(sin.ExistingNodes)/256%256, len(sin.ExistingNodes)%256)
			labels := it.Type.Labels()
			for k, v := range nc.Labels {
				labels[k] = v
			}
			labels[apiv1.LabelZone], labels[apiv1.LabelCapacityType] = off.Zone, off.CapacityType
			labels[apiv1.LabelNodePool], labels[apiv1.LabelHostname] = nc.NodePool, name
			n := solver.Node{Name: name, Labels: labels, Taints: nc.Taints, NodePool: nc.NodePool,
				Available: it.Shape.Allocatable.Sub(ds.Pod.Requests), Price: off.Price}
			nodeIdx[name] = len(sin.ExistingNodes)
			price[name] = off.Price
			sin.ExistingNodes = append(sin.ExistingNodes, n)
			sin.ExistingPods = append(sin.ExistingPods, solver.ExistingPod{Pod: solver.Pod{Namespace: ds.Namespace,
				Name: ds.Name + "-" + name, Requests: ds.Pod.Requests}, Node: name, Zone: off.Zone, Daemon: true})
			for _, k := range nc.Pods {
				place(byKey[k], name)
			}
		}
	}
	// Nodes launched past the target go, with their pods.
	if len(sin.ExistingNodes) > nodes {
		gone := map[string]bool{}
		for _, n := range sin.ExistingNodes[nodes:] {
			gone[n.Name] = true
		}
		sin.ExistingNodes = sin.ExistingNodes[:nodes]
		kept := sin.ExistingPods[:0]
		for _, ep := range sin.ExistingPods {
			if !gone[ep.Node] {
				kept = append(kept, ep)
			}
		}
		sin.ExistingPods = kept
	}
	onNode := map[string]int{}
	moving := 0
	for _, ep := range sin.ExistingPods {
		if !ep.Daemon {
			onNode[ep.Node]++
			moving++
		}
	}
	if shape == "underutilized" {
		if moving < pods {
			tb.Fatalf("grown to %d nodes with %d pods, fewer than %d", nodes, moving, pods)
		}
		order := rng.Perm(len(sin.ExistingPods))
		drop := map[int]bool{}
		for _, i := range order {
			if moving == pods {
				break
			}
			ep := sin.ExistingPods[i]
			if ep.Daemon || onNode[ep.Node] <= 1 {
				continue
			}
			drop[i] = true
			onNode[ep.Node]--
			moving--
			n := &sin.ExistingNodes[nodeIdx[ep.Node]]
			n.Available = n.Available.Add(ep.Pod.Requests)
		}
		var kept []solver.ExistingPod
		for i, ep := range sin.ExistingPods {
			if !drop[i] {
				kept = append(kept, ep)
			}
		}
		sin.ExistingPods = kept
	}
	c := &benchCluster{in: sin, pods: moving}
	podsOn := map[string][]disruption.Pod{}
	for _, ep := range sin.ExistingPods {
		podsOn[ep.Node] = append(podsOn[ep.Node], disruption.Pod{Active: true, Reschedulable: !ep.Daemon, Controlled: true})
	}
	for i, n := range sin.ExistingNodes {
		np := poolByName[n.NodePool]
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.Taints}}
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", np.Name, i),
			CreationTimestamp: metav1.NewTime(benchT0.Add(-2 * time.Hour)),
			Annotations:       map[string]string{apiv1.AnnotationNodePoolHash: disruption.NodePoolHash(np)}}}
		nc.Status.NodeName = n.Name
		nc.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionInitialized, Status: "True", LastTransitionTime: metav1.NewTime(benchT0.Add(-time.Hour))}}
		c.claims = append(c.claims, disruption.Claim{Claim: nc, Node: node, Pool: np, Price: price[n.Name], Pods: podsOn[n.Name]})
	}
	clusters[key] = c
	return c
}

// pass is one consolidation pass over the cluster, as ComputeDisruption
// builds it (nothing empty: the emptiness clocks are not running): the
// benchmark times candidate filtering, Decide and the pass's reasons
// (PassBlocks), as ComputeDisruption runs them.
func (c *benchCluster) pass(simulate func([]string) solver.RemovalResult) *disruption.Pass {
	cands := disruption.Candidates(c.claims)
	pools := map[string]disruption.PoolNodes{}
	for _, cl := range c.claims {
		pn := pools[cl.Pool.Name]
		pn.Nodes++
		pools[cl.Pool.Name] = pn
	}
	return &disruption.Pass{Now: benchT0, Candidates: cands, Pools: pools, Simulate: simulate}
}

var passShape = flag.String("pass-shape", "", "consolidation pass benchmark: only this cluster shape (underutilized, packed)")

// BenchmarkPass: go test -run xxx -bench Pass -benchmem -count 6 ./disruption/
func BenchmarkPass(b *testing.B) {
	for _, shape := range passShapes {
		if *passShape != "" && shape != *passShape {
			continue
		}
		c := passCluster(b, shape, passNodes, passPods)
		b.Run(fmt.Sprintf("%s/nodes=%d/pods=%d", shape, len(c.in.ExistingNodes), c.pods), func(b *testing.B) {
			b.ReportAllocs()
			var d saga.DisruptionDecision
			var blocked []disruption.Blocked
			sims := 0
			cpu0 := cpuSeconds()
			for b.Loop() {
				sims = 0
				rs := solver.NewRemovalSimulator(c.in)
				trace := &disruption.Trace{}
				p := c.pass(trace.Wrap(func(nodes []string) solver.RemovalResult {
					sims++
					return rs.Simulate(nodes)
				}))
				d = disruption.Decide(p)
				blocked = disruption.PassBlocks(p, d, trace)
			}
			b.ReportMetric(float64(len(d.Nodes)), "nodes-removed")
			if cpu := cpuSeconds() - cpu0; b.N > 0 {
				b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
			}
			b.ReportMetric(float64(len(blocked)), "nodes-blocked")
			b.ReportMetric(d.SavingUSDPerHour, "saving$/hour")
			b.ReportMetric(float64(sims), "simulations")
		})
	}
}

// karpenterPrefix is Karpenter's multi-node consolidation search
// (multinodeconsolidation.go, firstNConsolidationOption) over the same
// candidates and simulation: a binary search over prefix lengths of the
// candidates in consolidation order (budgets applied, at most 100),
// min=1, max=min(len-1, 100), trying candidates[0..mid]; a valid command
// (pure deletion or one cheaper replacement) moves min up, else max down;
// the last valid command wins.
func karpenterPrefix(p *disruption.Pass) (nodes []string, saving float64, sims int) {
	cs := disruption.Consolidatable(p, true)
	if len(cs) < 2 {
		return nil, 0, 0
	}
	lo, hi := 1, min(len(cs), 100)
	if len(cs) <= hi {
		hi = len(cs) - 1
	}
	for lo <= hi {
		mid := (lo + hi) / 2
		var names []string
		for _, c := range cs[:mid+1] {
			names = append(names, c.Node.Name)
		}
		sims++
		if r := p.Simulate(names); r.Possible {
			nodes, saving, lo = names, r.SavingUSDPerHour, mid+1
		} else {
			hi = mid - 1
		}
	}
	return nodes, saving, sims
}

// Multi-node consolidation must find a decision at least as good as
// Karpenter's prefix search on the same cluster and simulation: at least as
// many nodes removed, or as many with at least the saving (when the prefix
// search finds nothing, neither need we). Both figures are logged
// (go test -run MultiNodeVsKarpenter -v ./disruption/).
func TestMultiNodeAtLeastAsGoodAsKarpenterPrefixSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("grows a 1,000-node cluster")
	}
	for _, shape := range passShapes {
		c := passCluster(t, shape, passNodes, passPods)
		sims := 0
		rs := solver.NewRemovalSimulator(c.in)
		simulate := func(nodes []string) solver.RemovalResult {
			sims++
			return rs.Simulate(nodes)
		}
		d := disruption.Decide(c.pass(simulate))
		ours := sims
		sims = 0
		kn, ks, _ := karpenterPrefix(c.pass(simulate))
		t.Logf("%s cluster: %d nodes, %d pods, %.2f USD/hour", shape, len(c.in.ExistingNodes), c.pods, clusterUSD(c))
		t.Logf("  joinery %s: %d nodes removed, saving %.4f USD/hour, %d simulations; %s", d.Method, len(d.Nodes), d.SavingUSDPerHour, ours, d.Why)
		t.Logf("  karpenter prefix search: %d nodes removed, saving %.4f USD/hour, %d simulations", len(kn), ks, sims)
		if len(kn) < 2 {
			continue
		}
		if d.Method != saga.MethodMultiNode {
			t.Fatalf("%s: decision %s (%s); Karpenter's prefix search removes %d nodes", shape, d.Method, d.Why, len(kn))
		}
		if len(d.Nodes) < len(kn) || (len(d.Nodes) == len(kn) && d.SavingUSDPerHour < ks-1e-9) {
			t.Fatalf("%s: joinery removes %d nodes saving %.4f, Karpenter's prefix search %d saving %.4f", shape, len(d.Nodes), d.SavingUSDPerHour, len(kn), ks)
		}
		// The decision holds: a fresh simulation of exactly its nodes agrees.
		if r := solver.SimulateRemoval(c.in, d.Nodes); !r.Possible || r.SavingUSDPerHour < d.SavingUSDPerHour-1e-9 {
			t.Fatalf("%s: re-simulated: %+v", shape, r)
		}
	}
}

// cpuSeconds is the process's user+system CPU time: on a shared machine
// it says what a pass costs where wall time says how loaded the machine is.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func clusterUSD(c *benchCluster) float64 {
	total := 0.0
	for _, n := range c.in.ExistingNodes {
		total += n.Price
	}
	return total
}

// The grown clusters have the size the benchmark claims, every node holds
// a pod and nothing is empty or drifted, so the pass reaches consolidation.
func TestPassClusterShape(t *testing.T) {
	if testing.Short() {
		t.Skip("grows a 1,000-node cluster")
	}
	for _, shape := range passShapes {
		c := passCluster(t, shape, passNodes, passPods)
		if len(c.in.ExistingNodes) != passNodes {
			t.Errorf("%s: %d nodes", shape, len(c.in.ExistingNodes))
		}
		if shape == "underutilized" && c.pods != passPods {
			t.Errorf("%s: %d pods", shape, c.pods)
		}
		p := c.pass(nil)
		if len(p.Candidates) != passNodes {
			t.Errorf("%s: %d candidates", shape, len(p.Candidates))
		}
		types := map[string]int{}
		for _, n := range c.in.ExistingNodes {
			types[n.Labels[apiv1.LabelInstanceType]]++
		}
		var names []string
		for k := range types {
			names = append(names, k)
		}
		sort.Strings(names)
		t.Logf("%s: %d nodes, %d pods, %.2f USD/hour, %d instance types", shape, len(c.in.ExistingNodes), c.pods, clusterUSD(c), len(names))
	}
}
