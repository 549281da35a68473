package planner

import (
	"fmt"
	"slices"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/staticpool"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// StaticPool is a static NodePool's nodes still to launch: Input plans
// them as the controller's static provisioning does (staticpool.Input).
type StaticPool struct {
	Name string
	// Want is replicas capped by limits.nodes; Have the manifests' Nodes
	// of the pool; Input plans Want-Have nodes.
	Want, Have int
	Input      solver.Input
}

// staticPending is a static pool read by nodePools, its input made once
// the DaemonSets are known.
type staticPending struct {
	np *apiv1.NodePool
	sp solver.NodePool
}

// staticInputs makes Built.Static: each static pool's launches, the
// manifests' Nodes of the pool counted (and their zones spread over).
func (b *builder) staticInputs(count map[string]int) {
	for _, st := range b.static {
		want := staticpool.Want(*st.np.Spec.Replicas, st.sp.NodesLimit)
		have := count[st.np.Name]
		var markers []*apiv1.NodeClaim
		for _, n := range b.nodes {
			if n.Labels[apiv1.LabelNodePool] == st.np.Name {
				nc := &apiv1.NodeClaim{Status: apiv1.NodeClaimStatus{NodeName: n.Name}}
				nc.Name, nc.Labels = n.Name, n.Labels
				markers = append(markers, nc)
			}
		}
		in := staticpool.Input(st.sp, markers, max(want-have, 0))
		in.DaemonSets, in.NamespaceLabels = b.out.Input.DaemonSets, b.out.Input.NamespaceLabels
		b.out.Static = append(b.out.Static, StaticPool{Name: st.np.Name, Want: want, Have: have, Input: in})
	}
}

// StaticNode is one planned node of a static pool: launched whatever the
// pods, as Karpenter's static provisioning does; Node is the name the
// plan's pods are placed on it by.
type StaticNode struct {
	Node  string
	Claim solver.NewNodeClaim
}

// SolveAll plans the static pools' nodes, then the pending pods with
// those nodes as capacity being launched (pods that fit there go there,
// as Karpenter schedules pods onto in-flight NodeClaims). Price includes
// the static nodes; Ratio compares only the pods' new nodes with the
// lower bound (the static ones are owed whatever the pods).
func SolveAll(b *Built) Result {
	start := time.Now()
	in := b.Input
	in.ExistingNodes = slices.Clone(in.ExistingNodes)
	var static []StaticNode
	var short []string
	for _, st := range b.Static {
		si := st.Input
		si.Budget = in.Budget
		plan := solver.Solve(si)
		for i, nn := range plan.NewNodeClaims {
			nn.Pods = nil // virtual
			sn := StaticNode{Node: fmt.Sprintf("static/%s-%d", st.Name, st.Have+i), Claim: nn}
			static = append(static, sn)
			in.ExistingNodes = append(in.ExistingNodes, sn.asNode())
		}
		if len(plan.Unschedulable) > 0 {
			short = append(short, fmt.Sprintf("static NodePool %s: %d of its %d replicas cannot be planned: %s",
				st.Name, len(plan.Unschedulable), st.Want, plan.Unschedulable[0].Reason))
		}
	}
	r := Solve(in)
	r.Static, r.StaticShort = static, short
	for _, sn := range static {
		r.StaticPrice += sn.Claim.Price()
	}
	r.Price += r.StaticPrice
	r.SolveTime = time.Since(start)
	return r
}

// asNode is the static node as the pods' plan sees it: the cheapest
// planned type in its cheapest offering's zone and capacity type, with
// the pool's labels and taints, its allocatable less the DaemonSet
// overhead the static plan reserved.
func (sn StaticNode) asNode() solver.Node {
	nn := &sn.Claim
	if len(nn.InstanceTypes) == 0 {
		return solver.Node{Name: sn.Node, NodePool: nn.NodePool}
	}
	it := nn.InstanceTypes[0]
	off := solver.CheapestOffering(it.Offerings)
	labels := map[string]string{}
	for _, r := range nn.Requirements {
		if r.Operator == apiv1.OpIn && len(r.Values) == 1 {
			labels[r.Key] = r.Values[0]
		}
	}
	for k, v := range nn.Labels {
		labels[k] = v
	}
	for k, v := range it.Type.Labels() {
		labels[k] = v
	}
	labels[apiv1.LabelNodePool], labels[apiv1.LabelHostname] = nn.NodePool, sn.Node
	labels[apiv1.LabelZone], labels[apiv1.LabelCapacityType] = off.Zone, off.CapacityType
	// Requests hold the virtual pod's one pod slot: give it back.
	avail := it.Shape.Allocatable.Sub(nn.Requests).Add(resources.List{resources.Pods: 1})
	return solver.Node{Name: sn.Node, Labels: labels, Taints: slices.Clone([]corev1.Taint(nn.Taints)), Available: avail,
		NodePool: nn.NodePool, Price: nn.Price()}
}
