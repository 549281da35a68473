package solver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/internal/lp"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// lbType is an instance type whose allocatable is its capacity (cpu
// millicores, memory MiB, pods), offered on-demand at price in zone a (and
// as spot at spot in zone b when spot > 0).
func lbType(name string, cpu, memMiB, maxPods int64, price, spot float64) InstanceTypeOption {
	it := &catalog.InstanceType{Name: name, Family: "lb", Category: "l", Generation: 1, Size: name,
		Arch: "amd64", VCPU: int((cpu + 999) / 1000), MemoryMiB: memMiB, MaxPods: int(maxPods), OnDemandPrice: price}
	var c resources.List
	c[resources.CPU], c[resources.Memory], c[resources.Pods], c[resources.EphemeralStorage] = cpu, memMiB<<20, maxPods, 100<<30
	opt := InstanceTypeOption{Type: it, Shape: catalog.NodeShape{Capacity: c, Allocatable: c}}
	opt.Offerings = append(opt.Offerings, catalog.Offering{Zone: testZones[0], CapacityType: apiv1.CapacityTypeOnDemand, Price: price, Available: true})
	if spot > 0 {
		opt.Offerings = append(opt.Offerings, catalog.Offering{Zone: testZones[1], CapacityType: apiv1.CapacityTypeSpot, Price: spot, Available: true})
	}
	return opt
}

// Worked by hand: one $1/hour type of 1000m / 1000Mi and ten pods each of
// A = 600m/100Mi, B = 100m/600Mi, C = 400m/400Mi. A node holds at most one
// A (cpu) and one B (memory); A+B, A+C, B+C and C+C fit, no three pods do.
// The configuration LP's optimum is 15 nodes: 10 × {A,B} and 5 × {C,C},
// with duals y = (½, ½, ½), every two-pod configuration tight. The
// weighted-share bound cannot see it (one weight vector for all three
// shapes): it stops near 11.
func TestConfigLPBoundByHand(t *testing.T) {
	in := Input{NodePools: []NodePool{{Name: "p", NodesLimit: -1, InstanceTypes: []InstanceTypeOption{lbType("one", 1000, 1000, 110, 1, 0)}}}}
	for i := 0; i < 10; i++ {
		in.Pods = append(in.Pods, pod(fmt.Sprintf("a-%d", i), 600, 100), pod(fmt.Sprintf("b-%d", i), 100, 600), pod(fmt.Sprintf("c-%d", i), 400, 400))
	}
	lb := LowerBound(in)
	p := prepare(in)
	share, _ := shareBound(p, boundGroups(p))
	t.Logf("configuration LP %.6f, weighted shares %.6f", lb, share)
	if math.Abs(lb-15) > 1e-6 {
		t.Errorf("bound %.9f, want 15", lb)
	}
	if share > 12 {
		t.Errorf("weighted shares %.4f: the test no longer shows the gap", share)
	}
	if plan := Solve(in); plan.Price() < lb {
		t.Errorf("plan %.4f below the bound %.4f", plan.Price(), lb)
	}

	// Three 400m pods on 1000m nodes: two per node, so the LP buys 1.5
	// nodes (an integer plan needs 2). Then a second, larger type with
	// two price levels (2000m at $1.5 on-demand, $0.9 spot) and three
	// more such pods that require on-demand.
	in = Input{NodePools: []NodePool{{Name: "p", NodesLimit: -1, InstanceTypes: []InstanceTypeOption{lbType("one", 1000, 1000, 110, 1, 0)}}}}
	in.Pods = []Pod{pod("x-0", 400, 100), pod("x-1", 400, 100), pod("x-2", 400, 100)}
	if lb := LowerBound(in); math.Abs(lb-1.5) > 1e-6 {
		t.Errorf("three 400m pods: bound %.9f, want 1.5", lb)
	}
	in.NodePools[0].InstanceTypes = append(in.NodePools[0].InstanceTypes, lbType("two", 2000, 2000, 110, 1.5, 0.9))
	for i := 0; i < 3; i++ {
		q := pod(fmt.Sprintf("od-%d", i), 400, 100)
		q.NodeSelector = map[string]string{apiv1.LabelCapacityType: apiv1.CapacityTypeOnDemand}
		in.Pods = append(in.Pods, q)
	}
	// The spot node holds all three pods that may use spot (3·y_x ≤ 0.9,
	// y_x ≤ 0.3: only three exist); the on-demand 2000m node the three
	// on-demand pods and two others (3·y_od + 2·y_x ≤ 1.5); so y_x = y_od
	// = 0.3 and the bound is 1.8: the LP buys that node and a third of the
	// spot one (an integer plan: both, $2.4).
	if lb := LowerBound(in); math.Abs(lb-1.8) > 1e-6 {
		t.Errorf("two price levels: bound %.9f, want 1.8", lb)
	}
}

// On random small instances (two pools, one tainted; up to three types
// with small pod limits, spot and on-demand; a DaemonSet; up to eight
// pods) the bound never exceeds the optimum, found by trying every
// partition of the pods into nodes, and equals the configuration LP's
// optimum, computed over every configuration. Also with the dynamic
// program off (branch and bound prices) and with branch and bound cut
// short (its open subtrees bound θ: valid, but no longer the optimum).
func TestLowerBoundBelowOptimum(t *testing.T) {
	defer func(dp, bb [2]int) { cgDPCells, cgBBWork = dp, bb }(cgDPCells, cgBBWork)
	lowerBoundTrials(t, true)
	cgDPCells = [2]int{0, 0}
	lowerBoundTrials(t, true)
	cgBBWork = [2]int{40, 80}
	lowerBoundTrials(t, false)
}

func lowerBoundTrials(t *testing.T, exact bool) {
	rng := rand.New(rand.NewPCG(11, 3))
	taint := corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}
	ds := DaemonSet{Namespace: "kube-system", Name: "agent", Pod: Pod{
		Requests: resources.List{resources.CPU: 100, resources.Memory: 64 << 20, resources.Pods: 1}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	tighter := 0
	for trial := 0; trial < 150; trial++ {
		var pools []NodePool
		type node struct {
			tainted bool
			usable  resources.List
			price   float64
		}
		var nodes []node // every (pool, type, offering) a node can be
		for pi, name := range []string{"plain", "tainted"} {
			np := NodePool{Name: name, NodesLimit: -1}
			if pi == 1 {
				np.Taints = []corev1.Taint{taint}
			}
			for k := 0; k < 1+rng.IntN(3); k++ {
				cpu := int64(600 + 200*rng.IntN(10))
				mem := int64(512 * (1 + rng.IntN(6)))
				maxPods := int64(2 + rng.IntN(4))
				price := float64(1+rng.IntN(20)) / 10
				spot := 0.0
				if rng.IntN(2) == 0 {
					spot = price * float64(3+rng.IntN(5)) / 10
				}
				opt := lbType(fmt.Sprintf("%s-%d", name, k), cpu, mem, maxPods, price, spot)
				np.InstanceTypes = append(np.InstanceTypes, opt)
				u := opt.Shape.Allocatable.Sub(ds.Pod.Requests)
				for _, o := range opt.Offerings {
					nodes = append(nodes, node{pi == 1, u, o.Price})
				}
			}
			pools = append(pools, np)
		}
		shapes := [][2]int64{{250, 256}, {500, 512}, {700, 300}, {300, 900}, {1000, 1024}, {150, 1500}}
		var ps []Pod
		tolerates := []bool{}
		for i := 0; i < 3+rng.IntN(6); i++ {
			s := shapes[rng.IntN(len(shapes))]
			q := pod(fmt.Sprintf("p-%d", i), s[0], s[1])
			tl := rng.IntN(3) == 0
			if tl {
				q.Tolerations = []corev1.Toleration{tol("dedicated", "x", corev1.TaintEffectNoSchedule)}
			}
			ps = append(ps, q)
			tolerates = append(tolerates, tl)
		}
		in := Input{NodePools: pools, Pods: ps, DaemonSets: []DaemonSet{ds}}

		// cost of one node holding the pods in mask (Inf: none can).
		cost := func(mask int) float64 {
			var sum resources.List
			anyIntol := false
			for i := range ps {
				if mask&(1<<i) != 0 {
					r := ps[i].Requests
					r[resources.Pods] = 1
					sum = sum.Add(r)
					anyIntol = anyIntol || !tolerates[i]
				}
			}
			best := math.Inf(1)
			for _, n := range nodes {
				if (!n.tainted || !anyIntol) && sum.Fits(n.usable) {
					best = min(best, n.price)
				}
			}
			return best
		}
		// Pods no node holds alone are left out, as LowerBound does.
		var idx []int
		for i := range ps {
			if !math.IsInf(cost(1<<i), 1) {
				idx = append(idx, i)
			}
		}
		opt := math.Inf(1)
		block := make([]int, len(idx))
		var rec func(i, blocks int, acc float64)
		rec = func(i, blocks int, acc float64) {
			if acc >= opt {
				return
			}
			if i == len(idx) {
				opt = acc
				return
			}
			for b := 0; b <= blocks; b++ {
				block[i] = b
				// cost of the partition so far: recompute the touched block
				before, after := 0, 0
				for j := 0; j <= i; j++ {
					if block[j] == b {
						after |= 1 << idx[j]
						if j < i {
							before |= 1 << idx[j]
						}
					}
				}
				c := cost(after)
				if math.IsInf(c, 1) {
					continue
				}
				d := c
				if before != 0 {
					d -= cost(before)
				}
				nb := blocks
				if b == blocks {
					nb++
				}
				rec(i+1, nb, acc+d)
			}
		}
		rec(0, 0, 0)
		if len(idx) == 0 {
			opt = 0
		}
		lb := LowerBound(in)
		p := prepare(in)
		share, _ := shareBound(p, boundGroups(p))
		if lb > opt*(1+1e-9)+1e-12 {
			t.Fatalf("trial %d: bound %.6f above the optimum %.6f (%d pods)", trial, lb, opt, len(idx))
		}
		// And column generation reaches the LP optimum, computed over
		// every configuration of every node.
		if lp := allConfigLP(t, ps, tolerates, idx, func(i int) (bool, resources.List, float64) {
			return nodes[i].tainted, nodes[i].usable, nodes[i].price
		}, len(nodes)); (exact && lb < lp*(1-2e-4)) || lb > lp*(1+1e-9)+1e-12 {
			t.Fatalf("trial %d: bound %.6f, configuration LP %.6f", trial, lb, lp)
		}
		if lb > share*(1+1e-6) {
			tighter++
		}
	}
	t.Logf("configuration LP above the weighted shares in %d of 150 instances", tighter)
	if exact && tighter < 30 {
		t.Errorf("configuration LP beat the weighted shares in only %d instances", tighter)
	}
}

// On the whole of Input B the bound is well above the weighted-share
// bound ($96.97/hour) and still below the plan; it takes about a second.
func TestLowerBoundInputB(t *testing.T) {
	if testing.Short() {
		t.Skip("solves Input B")
	}
	in := inputB(t)
	start := time.Now()
	lb := LowerBound(in)
	took := time.Since(start)
	plan := Solve(in)
	t.Logf("Input B: bound %.3f in %v, plan %.3f, ratio %.3f", lb, took, plan.Price(), plan.Price()/lb)
	if lb < 97.8 || lb > plan.Price() {
		t.Errorf("bound %.3f, want in [97.8, plan %.3f]", lb, plan.Price())
	}
	batch := in
	batch.Pods = nil
	for _, q := range in.Pods {
		if strings.HasPrefix(q.Name, "batch-") {
			batch.Pods = append(batch.Pods, q)
		}
	}
	if a, b := LowerBound(batch), LowerBound(batch); a != b {
		t.Errorf("bound not deterministic: %v then %v", a, b)
	}
}

// allConfigLP solves the configuration LP of pods idx over every
// configuration of every node kind (tainted, usable, price), with the
// groups (requests, toleration) as rows.
func allConfigLP(t *testing.T, ps []Pod, tolerates []bool, idx []int, node func(int) (bool, resources.List, float64), nodes int) float64 {
	type gk struct {
		req resources.List
		tol bool
	}
	var keys []gk
	count := map[gk]int{}
	for _, i := range idx {
		r := ps[i].Requests
		r[resources.Pods] = 1
		k := gk{r, tolerates[i]}
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	if len(keys) == 0 {
		return 0
	}
	rhs := make([]float64, len(keys))
	for g, k := range keys {
		rhs[g] = float64(count[k])
	}
	master := lp.New(rhs)
	var basis []int
	for g, k := range keys { // each group alone, one pod per node, at its cheapest
		best := math.Inf(1)
		for j := 0; j < nodes; j++ {
			if tainted, u, price := node(j); (!tainted || k.tol) && k.req.Fits(u) {
				best = min(best, price)
			}
		}
		basis = append(basis, master.AddVar(lp.Column{Rows: []int32{int32(g)}, Values: []float64{1}}, best, math.Inf(1)))
	}
	for g := range keys {
		master.AddVar(lp.Column{Rows: []int32{int32(g)}, Values: []float64{-1}}, 0, math.Inf(1))
	}
	ks := make([]int, len(keys))
	for j := 0; j < nodes; j++ {
		tainted, u, price := node(j)
		var rec func(g int, use resources.List)
		rec = func(g int, use resources.List) {
			if g == len(keys) {
				var c lp.Column
				for h, k := range ks {
					if k > 0 {
						c.Rows = append(c.Rows, int32(h))
						c.Values = append(c.Values, float64(k))
					}
				}
				if len(c.Rows) > 0 {
					master.AddVar(c, price, math.Inf(1))
				}
				return
			}
			for k := 0; k <= count[keys[g]]; k++ {
				if k > 0 && tainted && !keys[g].tol {
					break
				}
				next := use
				for r := range next {
					next[r] += int64(k) * keys[g].req[r]
				}
				if !next.Fits(u) {
					break
				}
				ks[g] = k
				rec(g+1, next)
				ks[g] = 0
			}
		}
		rec(0, resources.List{})
	}
	if !master.SetBasis(basis) || !master.Solve(100000) {
		t.Fatalf("configuration LP not solved")
	}
	return master.Objective()
}

// NodePool limits are rows of the configuration LP. Eight 500m pods, two
// per 1000m node: a $1 pool limited to 2000m of capacity (two nodes) and
// a $3 pool without limits; so two cheap nodes and two dear ones, $8 (the
// weighted shares, which relax limits, see $4). With one node left under
// the cheap pool's node limit instead (three, one in use): $1 + 3 × $3.
func TestConfigLPBoundCountsLimits(t *testing.T) {
	input := func() Input {
		cheap := NodePool{Name: "cheap", Weight: 10, NodesLimit: -1, InstanceTypes: []InstanceTypeOption{lbType("one", 1000, 1000, 110, 1, 0)}}
		dear := NodePool{Name: "dear", NodesLimit: -1, InstanceTypes: []InstanceTypeOption{lbType("one-d", 1000, 1000, 110, 3, 0)}}
		return Input{NodePools: []NodePool{cheap, dear}, Pods: pods("p", 8, 500, 100)}
	}
	for _, c := range []struct {
		name  string
		limit func(*NodePool)
		want  float64
	}{
		{"cpu limit", func(np *NodePool) {
			np.Limits[resources.CPU], np.HasLimit[resources.CPU] = 2000, true
		}, 8},
		{"node limit", func(np *NodePool) { np.NodesLimit, np.NodeCount = 3, 2 }, 10},
	} {
		in := input()
		c.limit(&in.NodePools[0])
		lb := LowerBound(in)
		p := prepare(in)
		share, _ := shareBound(p, boundGroups(p))
		plan := Solve(in)
		t.Logf("%s: bound %.6f, weighted shares %.6f, plan %.4f", c.name, lb, share, plan.Price())
		if math.Abs(lb-c.want) > 1e-6 {
			t.Errorf("%s: bound %.9f, want %.0f", c.name, lb, c.want)
		}
		if share >= c.want {
			t.Errorf("%s: weighted shares %.4f: the test no longer shows the limit", c.name, share)
		}
		if len(plan.Unschedulable) > 0 || plan.Price() < lb-1e-9 {
			t.Errorf("%s: plan %.4f (%d unschedulable) below the bound %.4f", c.name, plan.Price(), len(plan.Unschedulable), lb)
		}
	}
}
