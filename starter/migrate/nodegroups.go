package migrate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// NodeGroup is a set of nodes Cluster Autoscaler scales together (an EKS
// managed node group, an eksctl node group, or nodes sharing a label the
// user names), as its Nodes show it.
type NodeGroup struct {
	Name   string // the group label's value
	Source string // the group label
	Nodes  []*corev1.Node
	// What the group's nodes are, sorted: instance types and families,
	// zones, capacity types (Karpenter's values), architectures.
	InstanceTypes, Families, Zones, CapacityTypes, Archs []string
	// Labels and Taints are on every node of the group and were put there
	// by whoever configured it (not the kubelet, the cloud or EKS).
	Labels map[string]string
	Taints []corev1.Taint
	// AMIAlias is the EC2NodeClass image alias for the nodes' OS image.
	AMIAlias string
}

// GroupLabels name a node's group, tried in order: EKS managed node groups,
// then eksctl's self-managed node groups.
var GroupLabels = []string{"eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name"}

// NodeGroups groups the nodes by the first of labels (default GroupLabels)
// they carry. Nodes of no group are left out with the reason: Fargate, a
// Karpenter or Joinery NodePool's, or no group label.
func NodeGroups(nodes []*corev1.Node, labels []string) (groups []*NodeGroup, ignored []string) {
	if len(labels) == 0 {
		labels = GroupLabels
	}
	byKey := map[string]*NodeGroup{}
	for _, n := range nodes {
		if why := notGrouped(n, labels); why != "" {
			ignored = append(ignored, n.Name+": "+why)
			continue
		}
		for _, l := range labels {
			v, ok := n.Labels[l]
			if !ok {
				continue
			}
			g := byKey[l+"="+v]
			if g == nil {
				g = &NodeGroup{Name: v, Source: l}
				byKey[l+"="+v] = g
				groups = append(groups, g)
			}
			g.Nodes = append(g.Nodes, n)
			break
		}
	}
	for _, g := range groups {
		g.describe()
	}
	slices.SortFunc(groups, func(a, b *NodeGroup) int { return strings.Compare(a.Name, b.Name) })
	return groups, ignored
}

func notGrouped(n *corev1.Node, labels []string) string {
	switch {
	case n.Labels["eks.amazonaws.com/compute-type"] == "fargate":
		return "Fargate"
	case n.Labels[apiv1.LabelNodePool] != "":
		return "already in NodePool " + n.Labels[apiv1.LabelNodePool]
	}
	for _, l := range labels {
		if _, ok := n.Labels[l]; ok {
			return ""
		}
	}
	return "no node group label (" + strings.Join(labels, ", ") + ")"
}

func (g *NodeGroup) describe() {
	types, families, zones, cts, archs := set{}, set{}, set{}, set{}, set{}
	for i, n := range g.Nodes {
		it := n.Labels[apiv1.LabelInstanceType]
		types.add(it)
		if fam, _, ok := strings.Cut(it, "."); ok {
			families.add(fam)
		}
		zones.add(n.Labels[apiv1.LabelZone])
		cts.add(CapacityTypeOf(n))
		archs.add(n.Labels[apiv1.LabelArch])
		if i == 0 {
			g.Labels = userLabels(n.Labels)
			g.Taints = userTaints(n.Spec.Taints)
			g.AMIAlias = amiAlias(n.Status.NodeInfo.OSImage)
			continue
		}
		maps.DeleteFunc(g.Labels, func(k, v string) bool { return n.Labels[k] != v })
		g.Taints = slices.DeleteFunc(g.Taints, func(t corev1.Taint) bool {
			return !slices.ContainsFunc(n.Spec.Taints, func(o corev1.Taint) bool { return o.MatchTaint(&t) && o.Value == t.Value })
		})
	}
	g.InstanceTypes, g.Families, g.Zones, g.CapacityTypes, g.Archs = types.sorted(), families.sorted(), zones.sorted(), cts.sorted(), archs.sorted()
}

// CapacityTypeOf is the node's capacity type as Karpenter names it, from
// the label EKS managed node groups carry; on-demand without it.
func CapacityTypeOf(n *corev1.Node) string {
	switch n.Labels["eks.amazonaws.com/capacityType"] {
	case "SPOT":
		return apiv1.CapacityTypeSpot
	}
	return apiv1.CapacityTypeOnDemand
}

// systemLabel reports labels the kubelet, the cloud, EKS, eksctl or a
// driver set: a NodePool's nodes get their own.
func systemLabel(k string) bool {
	domain, _, found := strings.Cut(k, "/")
	if !found {
		return false
	}
	for _, d := range []string{"kubernetes.io", "k8s.io", "eks.amazonaws.com", "alpha.eksctl.io", "karpenter.sh",
		"karpenter.k8s.aws", "k8s.amazonaws.com", "vpc.amazonaws.com", "topology.ebs.csi.aws.com"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

func userLabels(l map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		if !systemLabel(k) {
			out[k] = v
		}
	}
	return out
}

// userTaints drops the taints the node lifecycle, Cluster Autoscaler and
// Karpenter put on and take off.
func userTaints(ts []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		if systemLabel(t.Key) || t.Key == "ToBeDeletedByClusterAutoscaler" || t.Key == "DeletionCandidateOfClusterAutoscaler" {
			continue
		}
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return out
}

// amiAlias is the EC2NodeClass alias of the image family a node's OS image
// (status.nodeInfo.osImage) names; AL2023, EKS's default, when unknown.
func amiAlias(osImage string) string {
	switch s := strings.ToLower(osImage); {
	case strings.Contains(s, "bottlerocket"):
		return "bottlerocket@latest"
	case strings.Contains(s, "amazon linux 2023"):
		return "al2023@latest"
	case strings.Contains(s, "amazon linux 2"):
		return "al2@latest"
	case strings.Contains(s, "windows server 2019"):
		return "windows2019@latest"
	case strings.Contains(s, "windows"):
		return "windows2022@latest"
	}
	return "al2023@latest"
}

// Proposal is the NodePools and EC2NodeClasses that admit the pods the
// node groups ran.
type Proposal struct {
	Objects []map[string]interface{} // EC2NodeClasses, then NodePools
	Notes   []string
}

// CASConsolidateAfter is the proposed NodePools' consolidateAfter: Cluster
// Autoscaler's default --scale-down-unneeded-time, so nodes are not taken
// away sooner than the team is used to.
const CASConsolidateAfter = "10m"

// Propose writes one NodePool per node group, admitting what the group
// offered: its instance families, zones, capacity types and architectures,
// its labels (so node selectors keep matching) and taints (so only the
// pods that tolerated it land there); one EC2NodeClass per image family,
// discovering subnets and security groups by karpenter.sh/discovery.
func Propose(groups []*NodeGroup, cluster string) Proposal {
	var p Proposal
	classes := map[string]string{} // alias -> class name
	for _, g := range groups {
		if _, ok := classes[g.AMIAlias]; !ok {
			name := strings.TrimSuffix(g.AMIAlias, "@latest")
			classes[g.AMIAlias] = name
			p.Objects = append(p.Objects, nodeClass(name, g.AMIAlias, cluster))
		}
	}
	for _, g := range groups {
		p.Objects = append(p.Objects, nodePool(g, classes[g.AMIAlias]))
		if len(g.Families) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("NodePool %s: instance families %s as node group %s had; widen them to let Joinery choose cheaper types",
				poolName(g.Name), strings.Join(g.Families, ", "), g.Name))
		}
	}
	p.Notes = append(p.Notes,
		fmt.Sprintf("EC2NodeClass spec.role is KarpenterNodeRole-%s: set it to your node IAM role (the node groups' role has an EKS access entry already)", cluster),
		fmt.Sprintf("subnets and security groups are found by the tag karpenter.sh/discovery=%s: tag the node groups' subnets and security groups", cluster),
		"consolidateAfter "+CASConsolidateAfter+" is Cluster Autoscaler's default scale-down-unneeded-time; NodePool limits are not set (a node group's maximum size is not on its Nodes)")
	return p
}

func nodeClass(name, alias, cluster string) map[string]interface{} {
	discovery := []interface{}{map[string]interface{}{"tags": map[string]interface{}{"karpenter.sh/discovery": cluster}}}
	return map[string]interface{}{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
		"metadata": map[string]interface{}{"name": name},
		"spec": map[string]interface{}{
			"amiSelectorTerms":           []interface{}{map[string]interface{}{"alias": alias}},
			"role":                       "KarpenterNodeRole-" + cluster,
			"subnetSelectorTerms":        discovery,
			"securityGroupSelectorTerms": discovery,
		},
	}
}

func nodePool(g *NodeGroup, class string) map[string]interface{} {
	var reqs []interface{}
	for _, r := range []struct {
		key    string
		values []string
	}{{apiv1.LabelArch, g.Archs}, {apiv1.LabelCapacityType, g.CapacityTypes}, {apiv1.LabelZone, g.Zones}, {apiv1.LabelInstanceFamily, g.Families}} {
		if vs := nonEmpty(r.values); len(vs) > 0 {
			reqs = append(reqs, map[string]interface{}{"key": r.key, "operator": "In", "values": strs(vs)})
		}
	}
	spec := map[string]interface{}{
		"nodeClassRef": map[string]interface{}{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class},
		"requirements": reqs,
	}
	if len(g.Taints) > 0 {
		var ts []interface{}
		for _, t := range g.Taints {
			m := map[string]interface{}{"key": t.Key, "effect": string(t.Effect)}
			if t.Value != "" {
				m["value"] = t.Value
			}
			ts = append(ts, m)
		}
		spec["taints"] = ts
	}
	tpl := map[string]interface{}{"spec": spec}
	if len(g.Labels) > 0 {
		l := map[string]interface{}{}
		for k, v := range g.Labels {
			l[k] = v
		}
		tpl["metadata"] = map[string]interface{}{"labels": l}
	}
	return map[string]interface{}{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]interface{}{"name": poolName(g.Name)},
		"spec": map[string]interface{}{
			"template":   tpl,
			"disruption": map[string]interface{}{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": CASConsolidateAfter},
		},
	}
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// poolName is a node group name as a NodePool name (DNS-1123 subdomain).
func poolName(group string) string {
	s := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(group), "-"), "-")
	if s == "" {
		s = "nodegroup"
	}
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}

type set map[string]bool

func (s set) add(v string) { s[v] = true }

func (s set) sorted() []string { return slices.Sorted(maps.Keys(s)) }

func nonEmpty(vs []string) []string {
	return slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return v == "" })
}

func strs(vs []string) []interface{} {
	out := make([]interface{}, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
