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
// reports them unschedulable with a reason. It packs the batch first-fit
// decreasing once per strategy, searches per pod class and, for mixed
// batches, runs passes seeded by the configuration LP, within
// Input.Budget; the package documentation describes the search.
func Solve(in Input) Plan {
	start := time.Now()
	p := prepare(in)
	custom := len(in.Strategies) > 0
	sr := &search{p: p, custom: custom, strategies: in.Strategies, lpGuided: !in.DisableLPGuided, scheduled: in.Budget == 0 && !custom}
	switch {
	case in.Budget > 0:
		p.deadline = start.Add(in.Budget)
	case in.Budget == 0:
		p.deadline = start.Add(scheduleBackstop)
	}
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
		nc := newNodeClaim(c)
		p.giveFreeValues(c, &nc)
		if c.pool.bestEffort {
			nc.MinValuesRelaxed = relaxMinValues(&nc)
		}
		out.NewNodeClaims = append(out.NewNodeClaims, nc)
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
