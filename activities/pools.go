package activities

import (
	"sync"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"
)

// pools looks NodePools and EC2NodeClasses up in the informer caches, and
// reports the NodePools a snapshot skips, each change once (report).
type pools struct {
	cluster *kube.Cluster
	market  *catalog.Market // what registered nodes reported of their memory
	metrics *metrics.Metrics
	log     *zap.Logger

	mu      sync.Mutex
	invalid map[string]string // NodePool -> last reported error ("": valid)
}

func (p *pools) nodePool(name string) *apiv1.NodePool {
	if np, ok := p.cluster.ValidNodePool(name); ok {
		return np
	}
	return nil
}

// nodeCount counts a NodePool's nodes and those of them (other than
// except) tainted as being disrupted.
func (p *pools) nodeCount(pool, except string) disruption.PoolNodes {
	nodes, _ := p.cluster.Nodes.List(labels.SelectorFromSet(labels.Set{apiv1.LabelNodePool: pool}))
	pn := disruption.PoolNodes{Nodes: len(nodes)}
	for _, n := range nodes {
		if n.Name != except && disruption.HasTaint(n.Spec.Taints, apiv1.TaintKeyDisrupted) {
			pn.Disrupting++
		}
	}
	return pn
}

// claimLaunch is how a NodeClaim's node is launched, from its NodeClass
// (nil when the class is not known: EKS defaults).
func (p *pools) claimLaunch(nc *apiv1.NodeClaim) (catalog.Launch, *apiv1.EC2NodeClass) {
	if nc.Spec.NodeClassRef != nil {
		if cls, err := p.cluster.NodeClass(nc.Spec.NodeClassRef.Name); err == nil {
			return p.market.LaunchOf(cls), cls
		}
	}
	return p.market.LaunchOf(nil), nil
}
