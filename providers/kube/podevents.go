package kube

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CachedNodeClaim returns the named NodeClaim from the informer cache
// (nil: not there), shared as NodeClaims' are: read-only.
func (c *Cluster) CachedNodeClaim(name string) *apiv1.NodeClaim {
	o, ok, _ := c.nodeClaims.GetStore().GetByKey(name)
	if !ok {
		return nil
	}
	nc, err := c.claims.get(o)
	if err != nil {
		return nil
	}
	return nc
}

// NodeClaimOfNode names the cached NodeClaim of a node ("": none, e.g. a
// node Joinery did not launch): the one the Node's owner reference names
// (set at registration, before any pod can bind), else, for a node
// labelled with a NodePool, the one whose status.nodeName it is. It
// converts no object: pod events call it for every binding.
func (c *Cluster) NodeClaimOfNode(node string) string {
	n, err := c.Nodes.Get(node)
	if err != nil {
		return ""
	}
	for _, r := range n.OwnerReferences {
		if r.Kind != "NodeClaim" {
			continue
		}
		if o, ok, _ := c.nodeClaims.GetStore().GetByKey(r.Name); ok {
			if name := statusNodeName(o); name == node || name == "" {
				return r.Name
			}
		}
	}
	if _, ok := n.Labels[apiv1.LabelNodePool]; !ok {
		return ""
	}
	for _, o := range c.nodeClaims.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok && statusNodeName(o) == node {
			return u.GetName()
		}
	}
	return ""
}

func statusNodeName(o interface{}) string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", "nodeName")
	return s
}
