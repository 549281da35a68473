package activities

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// liveCatalog is the catalog to plan with: the Market's live instance
// types (DescribeInstanceTypes) when it has them, else the embedded one.
func (a *world) liveCatalog() *catalog.Catalog { return a.Market.Types(a.Catalog) }

// instanceType looks a type up in the live catalog, then in the embedded
// one: a node already running keeps its facts and price even when the
// live answer no longer lists its type.
func (a *world) instanceType(name string) (*catalog.InstanceType, bool) {
	if it, ok := a.liveCatalog().Get(name); ok {
		return it, true
	}
	if a.Catalog == nil {
		return nil, false
	}
	return a.Catalog.Get(name)
}

// private reports whether payload encryption is on (see Pseudonym).
func (a *world) private() bool { return a.Pseudonym != nil }

// Prices prices nodes after the NodeOverlays the last snapshot resolved.
func (a *world) Prices() *capacity.Prices { return a.prices }

func (a *world) nodePool(name string) *apiv1.NodePool {
	pools, _ := a.Cluster.NodePools()
	for _, p := range pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// poolNodeCount counts a NodePool's nodes and those of them (other than
// except) tainted as being disrupted.
func (a *world) poolNodeCount(pool, except string) disruption.PoolNodes {
	nodes, _ := a.Cluster.Nodes.List(labels.SelectorFromSet(labels.Set{apiv1.LabelNodePool: pool}))
	pn := disruption.PoolNodes{Nodes: len(nodes)}
	for _, n := range nodes {
		if n.Name != except && disruption.HasTaint(n.Spec.Taints, apiv1.TaintKeyDisrupted) {
			pn.Disrupting++
		}
	}
	return pn
}

// priceNodes sets each existing node's price (USD/hour) for SimulateRemoval.
func (a *world) priceNodes(snap *snapshot) {
	for i := range snap.input.ExistingNodes {
		n := &snap.input.ExistingNodes[i]
		if node, err := a.Cluster.Nodes.Get(n.Name); err == nil {
			n.Price = a.nodePrice(node)
		}
	}
}

// nodePrice is a node's price in USD/hour after its pool's NodeOverlays.
func (a *world) nodePrice(n *corev1.Node) float64 { return a.prices.Node(n) }

// claimLaunch is how a NodeClaim's node is launched, from its NodeClass
// (nil when the class is not known: EKS defaults).
func (a *world) claimLaunch(nc *apiv1.NodeClaim) (catalog.Launch, *apiv1.EC2NodeClass) {
	if nc.Spec.NodeClassRef != nil {
		if cls, err := a.Cluster.NodeClass(nc.Spec.NodeClassRef.Name); err == nil {
			return catalog.LaunchOf(&cls.Spec), cls
		}
	}
	return catalog.LaunchOf(nil), nil
}
