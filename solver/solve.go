package solver

import (
	"math/bits"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
)

// Strategy is one way to pack: Solve packs the batch once per strategy and
// keeps the best plan.
type Strategy struct {
	// VCPUCap drops from a new NodeClaim's instance types those with more
	// vCPUs than this (never the cheapest type that fits its first pod);
	// 0 means no cap.
	VCPUCap int
	// UpsizeTolerance is how much worse, as a fraction, the USD/hour per
	// unit of the dominant resource may get when a pod forces a claim from
	// its cheapest type to a pricier one (0.05 = 5%); larger lets claims
	// grow into bigger or pricier types.
	UpsizeTolerance float64
}

// DefaultStrategies is the search grid Solve uses when Input.Strategies is
// empty: a strict and a loose upsize tolerance, each with no cap and caps of
// 64, 32, 16 and 8 vCPUs.
func DefaultStrategies() []Strategy {
	var out []Strategy
	for _, tol := range []float64{0.05, 1} {
		for _, c := range []int{0, 64, 32, 16, 8} {
			out = append(out, Strategy{VCPUCap: c, UpsizeTolerance: tol})
		}
	}
	return out
}

// Solve places pending pods: onto existing nodes, onto new NodeClaims, or
// reports them unschedulable with a reason. It is pure and deterministic.
//
// Packing is first-fit decreasing (cpu desc, memory desc, older first, then
// namespace/name). For each pod: the first existing node by name that fits;
// else the least-loaded NodeClaim already opened in this plan whose
// remaining instance-type set can still hold it (the set narrows to the
// types that fit every pod on the claim, as in Karpenter); else a new
// NodeClaim from the highest-weight NodePool that can take the pod (weight
// is strict priority, ties by name).
//
// Cost heuristic (Joinery's, not Karpenter's). A claim that keeps every type
// that fits grows until its largest type is full, whatever that costs: two
// 1-GPU pods grow a g4dn.xlarge claim into a 4-GPU p3.8xlarge, one
// on-demand pod turns a spot claim on-demand, and the unfilled remainder of
// very large nodes is wasted. Two rules bound this:
//   - upsize rule: a pod may force the claim's cheapest type to a pricier
//     one only if the USD/hour per unit of the load's dominant resource does
//     not get worse by more than Strategy.UpsizeTolerance; otherwise the pod
//     goes to another claim or a new one;
//   - size cap: a new claim only keeps types up to Strategy.VCPUCap vCPUs.
//
// Which tolerance and cap are cheapest depends on the batch (pod shapes,
// daemonset overhead, spot discounts per size), so Solve packs the batch
// once per strategy (Input.Strategies, default DefaultStrategies) and keeps
// the plan with the fewest unschedulable pods, then the lowest total price
// (USD/hour), then the fewest nodes, then the earliest strategy. When the
// batch mixes pod classes (accelerator pods, pods of differently tainted
// pools: see podClasses), one round of coordinate search follows: for each
// class in turn, every other strategy for that class alone (with the
// default strategies: caps none, 32 and 8), the rest fixed, keeping any
// plan that is better by the same ordering (Input B: $164.8 -> $125.4/hour
// before the LP-guided passes). Each claim's price is its cheapest
// surviving offering, so a claim that ends half full falls back to a
// smaller type by itself.
//
// LP-guided passes (mixed batches: more than one pod class). First-fit
// decreasing packs each class apart (memory-heavy replicas on memory
// nodes, small web pods on small nodes), while the cheapest plans mix
// them on large nodes. Solve therefore solves the configuration LP of
// LowerBound (column generation, stopped within 1% of its bound: about
// 0.4 s on Input B) and turns its solution into seeds: ⌊x_c⌋ claims per
// configuration c (a node type of a pool with so many pods of each
// group). Each strategy of the grid is also run seeded: the seeds' claims
// open first, each through the ordinary open in the configuration's pool
// by a pod whose highest-weight pool able to take it is that pool
// (accelerator pods first, then in packing order; a configuration without
// such a pod is not seeded), and their other pods join round robin, one
// per seed per round, through the ordinary add, so resources, types,
// zone spread and other topology, host ports and limits are all checked;
// only the cost heuristics (upsize rule, size cap, accelerator slack rule)
// are off for seeds. Pods a seed cannot take, and those of the fractional
// rest of the LP solution, are packed by the greedy after the seeds (onto
// seeds first, as onto any open claim). Seeded passes compete with the
// others by the same ordering, and the per-class search continues from the
// best pass, seeded or not (Input B: $125.4 -> $101.6/hour, 1.04 x the
// bound, in less time than before as seeded passes are cheaper). Unlike
// the greedy, a seed's first pod opens its claim even when an earlier
// claim could still hold it. Batches of one class (Input A) skip all this.
//
// A claim launches as one of its MaxInstanceTypes cheapest surviving types
// and counts against NodePool limits by their largest capacity; limits are
// re-checked whenever a claim's set changes, so no pool limit is exceeded
// whichever of those types is launched.
//
// Anytime and bounded (Input.Budget, DefaultBudget when zero, none when
// negative). The first pass (greedyStrategy with the default strategies,
// else the first strategy given) always runs to the end and is
// deterministic; then the LP seeds (from two warm starts), the seeded and
// the other plain passes and the per-class search follow, the passes that
// win most often first (see search.run), each replacing the best plan
// only when better by the ordering above, until the budget is spent (a
// pass or the LP cut off by it is dropped, so Solve returns at most a few
// milliseconds late), every pass has run, or the plan costs no more than
// the LP's lower bound. Only the whole search (a negative budget, or one
// long enough) is deterministic: what a budget cuts off
// depends on the machine's speed.
func Solve(in Input) Plan {
	start := time.Now()
	p := prepare(in)
	if in.Budget >= 0 {
		p.deadline = start.Add(budgetOf(in.Budget))
	}
	sr := &search{p: p, custom: len(in.Strategies) > 0, strategies: in.Strategies}
	if !sr.custom {
		sr.strategies = DefaultStrategies()
	}
	best := sr.run()
	if len(best.unsched) > 0 {
		p.abortable = false
		best = p.runSeeded(best.byClass, true, -1, best.seeds)
	}
	return p.plan(best)
}

// lpGuided enables the LP-guided passes (a variable for the tests).
var lpGuided = true

// refineCap: the size caps the per-class search tries with the default
// strategies (none, 32 and 8 vCPUs found every improvement the full grid
// found on Input B, at 5 instead of 9 passes per class).
func refineCap(c int) bool { return c == 0 || c == 32 || c == 8 }

// Price is the plan's total USD/hour: the sum of every new NodeClaim's price.
func (p *Plan) Price() float64 {
	total := 0.0
	for i := range p.NewNodeClaims {
		total += p.NewNodeClaims[i].Price()
	}
	return total
}

func (p *prepared) plan(s *pass) Plan {
	out := Plan{ExistingPlacements: s.placed, Unschedulable: s.unsched}
	for _, c := range s.claims {
		out.NewNodeClaims = append(out.NewNodeClaims, newNodeClaim(c))
	}
	return out
}

// newNodeClaim turns a packed claim into the plan's NodeClaim: its first
// MaxInstanceTypes surviving types, ordered by their cheapest compatible
// available offering (ties by name), each with only those offerings;
// requests with the daemonset overhead of the cheapest type; requirements
// narrowed by the pods.
func newNodeClaim(c *claim) NewNodeClaim {
	pl := c.pool
	n := min(len(c.types), MaxInstanceTypes)
	nc := NewNodeClaim{NodePool: pl.np.Name, Requests: c.req}
	total := 0
	for i := range c.types[:n] {
		total += bits.OnesCount64(c.masks[i])
	}
	buf := make([]catalog.Offering, 0, total) // one allocation for all options
	nc.InstanceTypes = make([]InstanceTypeOption, 0, n)
	for i, t := range c.types[:n] {
		ti := &pl.types[t]
		start := len(buf)
		for o := range ti.offs {
			if c.masks[i]&(1<<uint(o)) != 0 {
				buf = append(buf, ti.offs[o])
			}
		}
		nc.InstanceTypes = append(nc.InstanceTypes, InstanceTypeOption{Type: ti.opt.Type, Shape: ti.opt.Shape, Offerings: buf[start:len(buf):len(buf)]})
	}
	for _, pi := range c.pods {
		nc.Pods = append(nc.Pods, pi.key)
	}
	var names []string
	cts, zones := map[string]bool{}, map[string]bool{}
	for _, o := range nc.InstanceTypes {
		names = append(names, o.Type.Name)
		for _, of := range o.Offerings {
			cts[of.CapacityType] = true
			zones[of.Zone] = true
		}
	}
	if n > 0 {
		nc.Requests = nc.Requests.Add(pl.overhead[c.types[0]])
	}
	nc.Requirements = claimRequirements(pl, c, names, sortedKeys(cts), sortedKeys(zones))
	if len(pl.np.Labels) > 0 {
		nc.Labels = make(map[string]string, len(pl.np.Labels))
		for k, v := range pl.np.Labels {
			nc.Labels[k] = v
		}
	}
	nc.Taints = append([]corev1.Taint(nil), pl.np.Taints...)
	return nc
}

// claimRequirements is the pool's requirements, then those the pods added
// (node selector values, the chosen affinity term), with instance type,
// capacity type and zone replaced by In lists of what survived (keeping a
// pool minValues on those keys).
func claimRequirements(pl *poolInfo, c *claim, types, cts, zones []string) []req {
	derived := []req{
		{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: types},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: cts},
		{Key: apiv1.LabelZone, Operator: apiv1.OpIn, Values: zones},
	}
	isDerived := func(key string) int {
		for i := range derived {
			if derived[i].Key == key {
				return i
			}
		}
		return -1
	}
	var out []req
	for _, r := range pl.np.Requirements {
		if i := isDerived(r.Key); i >= 0 {
			if r.MinValues != nil {
				mv := *r.MinValues
				if derived[i].MinValues == nil || *derived[i].MinValues < mv {
					derived[i].MinValues = &mv
				}
			}
			continue
		}
		out = append(out, copyReq(r))
	}
	for _, r := range c.reqs {
		if isDerived(r.Key) >= 0 {
			continue
		}
		merged := false
		for i := range out {
			if sameReq(out[i], r) {
				merged = true
				break
			}
			if out[i].Key == r.Key && out[i].Operator == apiv1.OpIn && r.Operator == apiv1.OpIn {
				// Two In lists on one key: keep their intersection.
				var both []string
				for _, v := range out[i].Values {
					if contains(r.Values, v) {
						both = append(both, v)
					}
				}
				out[i].Values = both
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, copyReq(r))
		}
	}
	return append(out, derived...)
}

func copyReq(r req) req {
	r.Values = append([]string(nil), r.Values...)
	if r.MinValues != nil {
		mv := *r.MinValues
		r.MinValues = &mv
	}
	return r
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
