// Package whatif previews what applying NodePools and EC2NodeClasses would
// do to a running cluster (`starter what-if`), and what the whole cluster
// would cost if re-planned from scratch (`starter what-if --rebalance`).
// It holds no rules of its own: drift is disruption.Drift, candidates are
// disruption.Filter's, the order under the budgets is a replay of the
// controller's drift method (disruption.DriftDecision, one node per pass,
// as the Consolidation workflow drains drifted nodes one after the
// other), and plans are solver.Solve's over the controller's own snapshot
// (preview/live reads it). Pure: no I/O, no wall clock.
package whatif

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/solver"
)

// State is the cluster as the controller sees it now, with the solver
// input it would plan over before and after the change.
type State struct {
	Now time.Time
	// Claims are every NodeClaim with its Node, NodePool, EC2NodeClass,
	// price and pods, as the consolidation pass reads them (pools and
	// classes as they are in the cluster now).
	Claims []disruption.Claim
	// Before is the controller's snapshot with the cluster's NodePools;
	// After the same with the NodePools of the change (each planned as
	// the controller plans a pool: its class's zones and images, the live
	// offerings). Existing nodes carry their price.
	Before, After solver.Input
	// Pools are, by NodePool name, the node counts its budgets apply to.
	Pools map[string]disruption.PoolNodes
	// Classes are the cluster's EC2NodeClasses by name.
	Classes map[string]*apiv1.EC2NodeClass
	// Notes are what the reader could not take into account.
	Notes []string
}

// Change is the objects of the file: NodePools and EC2NodeClasses that
// replace the cluster's of the same name (or are new).
type Change struct {
	NodePools   []*apiv1.NodePool
	NodeClasses []*apiv1.EC2NodeClass
}

// Timing is the rough time model of a drift replacement.
type Timing struct {
	// PassInterval is the Consolidation workflow's pause between passes
	// (workflows.DefaultPassInterval).
	PassInterval time.Duration
	// Launch is how long a replacement takes to launch and become Ready
	// (0 for a node without pods to move: nothing is launched).
	Launch time.Duration
	// Drain is how long evicting the pods and terminating takes.
	Drain time.Duration
	// Horizon: budgets that allow nothing for this long (a "0" budget, a
	// schedule that never opens) hold the remaining nodes.
	Horizon time.Duration
}

// DefaultTiming: a pass every 10 s, a minute and a half to launch a
// replacement on EC2 and see it Ready, a minute to drain, one day of
// budget schedules.
var DefaultTiming = Timing{PassInterval: 10 * time.Second, Launch: 90 * time.Second, Drain: time.Minute, Horizon: 24 * time.Hour}

// Node is one existing node in the report.
type Node struct {
	Node         string  `json:"node"`
	NodeClaim    string  `json:"nodeClaim"`
	NodePool     string  `json:"nodePool"`
	InstanceType string  `json:"instanceType"`
	CapacityType string  `json:"capacityType"`
	Zone         string  `json:"zone"`
	PriceUSDHour float64 `json:"priceUSDPerHour"`
	Pods         int     `json:"pods"` // pods that must move when it goes
}

// Drifted is a node the change drifts.
type Drifted struct {
	Node
	Reason  string `json:"reason"`  // Karpenter's: RequirementsDrifted, NodePoolDrifted, NodeClassDrift, AMIDrift...
	Message string `json:"message"` // disruption.Drift's sentence
	// AlreadyDrifted: it drifts under the cluster's objects too.
	AlreadyDrifted bool `json:"alreadyDrifted,omitempty"`
	// Blocked are why voluntary disruption may not take it (it stays,
	// drifted): do-not-disrupt, a PDB allowing nothing, no controller...
	Blocked []string `json:"blocked,omitempty"`
}

// Step is one drift replacement in the order the budgets let them go.
type Step struct {
	Node     string        `json:"node"`
	NodePool string        `json:"nodePool"`
	Start    time.Duration `json:"-"` // after the change is applied
	End      time.Duration `json:"-"`
	// Waited is how long the pool's Drifted budget held it.
	Waited time.Duration `json:"-"`
}

// MarshalJSON writes the times in seconds.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	return json.Marshal(struct {
		plain
		Start  float64 `json:"startSeconds"`
		End    float64 `json:"endSeconds"`
		Waited float64 `json:"budgetWaitSeconds,omitempty"`
	}{plain(s), s.Start.Seconds(), s.End.Seconds(), s.Waited.Seconds()})
}

// Held is a drifted node the budgets do not let go within the horizon.
type Held struct {
	Node     string `json:"node"`
	NodePool string `json:"nodePool"`
	Why      string `json:"why"`
}

// Claim is a node the replacement plan launches.
type Claim struct {
	NodePool      string   `json:"nodePool"`
	InstanceType  string   `json:"instanceType"`
	CapacityType  string   `json:"capacityType"`
	Zone          string   `json:"zone"`
	PriceUSDHour  float64  `json:"priceUSDPerHour"`
	InstanceTypes int      `json:"instanceTypes"` // how many types the NodeClaim may launch as
	Pods          []string `json:"pods"`
}

// Unschedulable is a pod with nowhere to go, and why.
type Unschedulable struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
	// From is the drifted node it leaves ("": pending already).
	From string `json:"from,omitempty"`
}

// Report is the preview of a change.
type Report struct {
	Drifted []Drifted     `json:"drifted"`
	Order   []Step        `json:"order"`
	Held    []Held        `json:"held,omitempty"`
	Total   time.Duration `json:"-"` // until the last drifted node is gone
	// Replacements are the new nodes for the pods of the nodes that go;
	// Placed counts those pods that fit on the nodes that stay.
	Replacements  []Claim         `json:"replacements"`
	Placed        int             `json:"placedOnExistingNodes"`
	Unschedulable []Unschedulable `json:"unschedulable"`
	// Nodes cost before (what `starter status` shows) and after: the
	// nodes that stay plus the replacements (USD/hour).
	BeforeUSDHour float64  `json:"beforeUSDPerHour"`
	AfterUSDHour  float64  `json:"afterUSDPerHour"`
	Notes         []string `json:"notes,omitempty"`
}

// MarshalJSON writes Total in seconds.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		plain
		Total float64 `json:"totalSeconds"`
	}{plain(r), r.Total.Seconds()})
}

// Retarget gives each claim the change's NodePool of its pool's name, and
// the EC2NodeClass that pool then names: the change's (spec from the
// change, status from the cluster's class of that name, see MergeClass)
// or the cluster's. Claims are copied; the cluster's objects are not
// changed.
func Retarget(claims []disruption.Claim, ch Change, classes map[string]*apiv1.EC2NodeClass) []disruption.Claim {
	pools := map[string]*apiv1.NodePool{}
	for _, p := range ch.NodePools {
		pools[p.Name] = p
	}
	newClasses := map[string]*apiv1.EC2NodeClass{}
	for _, c := range ch.NodeClasses {
		newClasses[c.Name] = MergeClass(c, classes[c.Name])
	}
	out := make([]disruption.Claim, len(claims))
	for i, c := range claims {
		out[i] = c
		if c.Pool == nil {
			continue
		}
		ref := c.Pool.Spec.Template.Spec.NodeClassRef
		if p, ok := pools[c.Pool.Name]; ok {
			out[i].Pool, ref = p, p.Spec.Template.Spec.NodeClassRef
			out[i].Class = nil
			if ref != nil {
				out[i].Class = classes[ref.Name]
			}
		}
		if ref != nil {
			if nc, ok := newClasses[ref.Name]; ok {
				out[i].Class = nc
			}
		}
		if out[i].Class != c.Class {
			// What the new class offers is not known offline: no
			// InstanceTypeNotFound judged against it.
			out[i].Offered = nil
		}
	}
	return out
}

// MergeClass is the change's EC2NodeClass as the controller will see it
// once applied, before its reconciler runs again: its spec, with the
// status (resolved subnets, security groups, images) of the cluster's
// class of that name (live nil: a new class, no status yet). What new
// selector terms would resolve to is known only after applying; the
// static fields (NodeClassHash) are compared now.
func MergeClass(spec, live *apiv1.EC2NodeClass) *apiv1.EC2NodeClass {
	out := *spec // shallow: neither is written
	out.Status = apiv1.EC2NodeClassStatus{}
	if live != nil {
		out.Status = live.Status
	}
	return &out
}

// DriftedBy lists the nodes the retargeted claims drift (disruption.Drift
// on each claim with a Node and a NodePool), each with whether the
// cluster's own objects drift it already (from the claims before
// Retarget, same order) and what blocks its disruption
// (disruption.Filter). Ordered by node name.
func DriftedBy(before, after []disruption.Claim) []Drifted {
	_, blocked := disruption.Filter(after)
	why := map[string][]string{}
	for _, b := range blocked {
		for _, bl := range b.Blocks {
			why[b.NodeClaim] = append(why[b.NodeClaim], string(bl.Kind)+": "+bl.Message)
		}
	}
	var out []Drifted
	for i, c := range after {
		if c.Node == nil || c.Pool == nil || c.Claim.DeletionTimestamp != nil {
			continue
		}
		reason, msg := disruption.Drift(c.Claim, c.Node, c.Pool, c.Class, c.Offered, nodeclass.LaunchedFrom(c.Claim))
		if reason == "" {
			continue
		}
		d := Drifted{Node: nodeOf(c), Reason: reason, Message: msg, Blocked: why[c.Claim.Name]}
		if b := before[i]; b.Pool != nil {
			r, _ := disruption.Drift(b.Claim, b.Node, b.Pool, b.Class, b.Offered, nodeclass.LaunchedFrom(b.Claim))
			d.AlreadyDrifted = r != ""
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node.Node < out[j].Node.Node })
	return out
}

func nodeOf(c disruption.Claim) Node {
	n := Node{Node: c.Node.Name, NodeClaim: c.Claim.Name, PriceUSDHour: c.Price,
		InstanceType: c.Node.Labels[apiv1.LabelInstanceType], CapacityType: c.Node.Labels[apiv1.LabelCapacityType],
		Zone: c.Node.Labels[apiv1.LabelZone]}
	if c.Pool != nil {
		n.NodePool = c.Pool.Name
	}
	for _, p := range c.Pods {
		if p.Active && p.Reschedulable {
			n.Pods++
		}
	}
	return n
}

// Order replays the controller's drift passes over the retargeted claims
// from now: every PassInterval a pass takes the first drifted candidate
// its pool's Drifted budget allows at that time (disruption.DriftDecision,
// budget schedules included), and the Consolidation workflow waits for its
// DrainAndReplace (launch the replacement when the node has pods to move,
// drain, terminate) before the next pass. Nodes still drifted after
// Horizon are held, with the budget that holds them. Other methods
// (emptiness first) and pending pods would delay drift further; they are
// not modelled.
func Order(claims []disruption.Claim, pools map[string]disruption.PoolNodes, now time.Time, t Timing) ([]Step, []Held, time.Duration) {
	if t.PassInterval <= 0 {
		t.PassInterval = DefaultTiming.PassInterval
	}
	if t.Horizon <= 0 {
		t.Horizon = DefaultTiming.Horizon
	}
	cands := disruption.Candidates(claims)
	pods := map[string]int{}
	for _, c := range cands {
		pods[c.Node.Name] = c.Pods
	}
	var budgetErr []string
	var steps []Step
	at := time.Duration(0)
	ready := time.Duration(0) // when the last step ended
	for at < t.Horizon && len(cands) > 0 {
		at += t.PassInterval
		p := &disruption.Pass{Now: now.Add(at), Candidates: cands, Pools: pools,
			OnBudgetError: func(pool string, err error) { budgetErr = append(budgetErr, pool+": "+err.Error()) }}
		d, ok := disruption.DriftDecision(p)
		if !ok {
			if !anyDrifted(cands) || len(budgetErr) > 0 {
				break
			}
			continue
		}
		node := d.Nodes[0]
		s := Step{Node: node, NodePool: d.NodePool, Start: at, Waited: at - ready - t.PassInterval}
		if pods[node] > 0 {
			at += t.Launch
		}
		at += t.Drain
		s.End, ready = at, at
		steps = append(steps, s)
		cands = withoutNode(cands, node)
	}
	var held []Held
	for _, c := range cands {
		_, why := disruption.Drift(c.Claim, c.Node, c.Pool, c.Class, c.Offered, nodeclass.LaunchedFrom(c.Claim))
		if why == "" {
			continue
		}
		h := Held{Node: c.Node.Name, NodePool: c.Pool.Name}
		allowed, err := disruption.Allowed(c.Pool.Spec.Disruption.Budgets, disruption.BudgetReasonDrifted, pools[c.Pool.Name].Nodes, now)
		switch {
		case err != nil:
			h.Why = "NodePool " + c.Pool.Name + " budgets: " + err.Error()
		case allowed > 0:
			h.Why = fmt.Sprintf("not reached within %s (one node at a time)", t.Horizon)
		default:
			h.Why = fmt.Sprintf("NodePool %s's Drifted budget allows %d node(s) now and opens for no more within %s", c.Pool.Name, allowed, t.Horizon)
		}
		held = append(held, h)
	}
	return steps, held, ready
}

func anyDrifted(cands []disruption.Candidate) bool {
	for _, c := range cands {
		if r, _ := disruption.Drift(c.Claim, c.Node, c.Pool, c.Class, c.Offered, nodeclass.LaunchedFrom(c.Claim)); r != "" {
			return true
		}
	}
	return false
}

func withoutNode(cands []disruption.Candidate, node string) []disruption.Candidate {
	out := make([]disruption.Candidate, 0, len(cands))
	for _, c := range cands {
		if c.Node.Name != node {
			out = append(out, c)
		}
	}
	return out
}

// Replan solves in with the named nodes gone: their pods (except
// DaemonSet pods) pending with the pods pending already, placed on the
// nodes that stay or on new NodeClaims, as the controller's
// PlanReplacement plans a drained node's pods. It returns the plan, the
// USD/hour of the nodes that stay and, by pod, the node it leaves.
func Replan(in solver.Input, gone []string, budget time.Duration) (solver.Plan, float64, map[string]string) {
	out, stay, from := without(in, gone)
	out.Budget = budget
	return solver.Solve(out), stay, from
}

// without is in with the named nodes gone and their pods pending (see
// Replan).
func without(in solver.Input, gone []string) (solver.Input, float64, map[string]string) {
	rm := map[string]bool{}
	for _, n := range gone {
		rm[n] = true
	}
	out := in
	out.ExistingNodes, out.ExistingPods = nil, nil
	out.Pods = append([]solver.Pod(nil), in.Pods...)
	stay := 0.0
	for _, n := range in.ExistingNodes {
		if rm[n.Name] {
			continue
		}
		out.ExistingNodes = append(out.ExistingNodes, n)
		stay += n.Price
	}
	from := map[string]string{}
	for _, ep := range in.ExistingPods {
		if !rm[ep.Node] {
			out.ExistingPods = append(out.ExistingPods, ep)
			continue
		}
		if !ep.Daemon {
			out.Pods = append(out.Pods, ep.Pod)
			from[ep.Pod.Key()] = ep.Node
		}
	}
	sort.SliceStable(out.Pods, func(i, j int) bool { return out.Pods[i].Key() < out.Pods[j].Key() })
	return out, stay, from
}

// Price is the USD/hour of the input's Joinery nodes (NodePool label),
// what `starter status` shows as the nodes' cost: not a managed node
// group's nodes, which no change of Joinery's moves.
func Price(in solver.Input) float64 { return solver.NodesPrice(in.ExistingNodes, true) }

// Analyze previews the change over the state: the nodes it drifts, their
// order under the budgets with the time it takes, the replacement plan
// (State.After without the nodes that go) with its cost, and the pods
// that would have nowhere to go.
func Analyze(st State, ch Change, t Timing, budget time.Duration) Report {
	after := Retarget(st.Claims, ch, st.Classes)
	r := Report{Drifted: DriftedBy(st.Claims, after), BeforeUSDHour: Price(st.Before), Notes: st.Notes}
	r.Order, r.Held, r.Total = Order(after, st.Pools, st.Now, t)
	if r.Drifted == nil {
		r.Drifted = []Drifted{}
	}
	if r.Order == nil {
		r.Order = []Step{}
	}
	var gone []string
	for _, s := range r.Order {
		gone = append(gone, s.Node)
	}
	plan, stay, from := Replan(st.After, gone, budget)
	r.Replacements, r.Placed, r.Unschedulable = claims(plan), len(plan.ExistingPlacements), unschedulable(plan, from)
	r.AfterUSDHour = stay - solver.NodesPrice(st.After.ExistingNodes, false) + plan.Price()
	return r
}

func claims(plan solver.Plan) []Claim {
	out := []Claim{}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		c := Claim{NodePool: nc.NodePool, PriceUSDHour: nc.Price(), InstanceTypes: len(nc.InstanceTypes), Pods: nc.Pods}
		if len(nc.InstanceTypes) > 0 {
			o := solver.CheapestOffering(nc.InstanceTypes[0].Offerings)
			c.InstanceType, c.CapacityType, c.Zone = nc.InstanceTypes[0].Type.Name, o.CapacityType, o.Zone
		}
		out = append(out, c)
	}
	return out
}

func unschedulable(plan solver.Plan, from map[string]string) []Unschedulable {
	out := []Unschedulable{}
	for _, u := range plan.Unschedulable {
		out = append(out, Unschedulable{Pod: u.Pod, Reason: u.Reason, From: from[u.Pod]})
	}
	return out
}

// Rebalance is the whole cluster re-planned from scratch now: every pod
// of a Joinery node (NodePool label) pending, planned over in's NodePools
// with the other nodes kept, and the solver's lower bound beside it.
type Rebalance struct {
	NowUSDHour float64 `json:"nowUSDPerHour"`
	// PlanUSDHour is the kept nodes plus the plan's new nodes;
	// LowerBoundUSDHour the kept nodes plus solver.LowerBound of the pods.
	PlanUSDHour       float64         `json:"planUSDPerHour"`
	LowerBoundUSDHour float64         `json:"lowerBoundUSDPerHour"`
	Ratio             float64         `json:"ratio"` // plan / lower bound
	KeptUSDHour       float64         `json:"keptUSDPerHour"`
	Kept              int             `json:"keptNodes"` // nodes no NodePool owns
	Nodes             []Claim         `json:"nodes"`
	Unschedulable     []Unschedulable `json:"unschedulable"`
}

// RebalancePlan re-plans every Joinery node's pods over in (see Rebalance).
func RebalancePlan(in solver.Input, budget time.Duration) Rebalance {
	var gone []string
	for _, n := range in.ExistingNodes {
		if n.NodePool != "" {
			gone = append(gone, n.Name)
		}
	}
	plan, kept, from := Replan(in, gone, budget)
	r := Rebalance{NowUSDHour: Price(in) + kept, KeptUSDHour: kept, Kept: len(in.ExistingNodes) - len(gone),
		Nodes: claims(plan), Unschedulable: unschedulable(plan, from)}
	r.PlanUSDHour = kept + plan.Price()
	lbIn, _, _ := without(in, gone)
	r.LowerBoundUSDHour = kept + solver.LowerBound(lbIn)
	if r.LowerBoundUSDHour > 0 {
		r.Ratio = r.PlanUSDHour / r.LowerBoundUSDHour
	}
	return r
}
