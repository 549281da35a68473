package controller

import (
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// nodeCollector computes node metrics from the informer caches at scrape
// time: count, allocatable, requests and utilisation per NodePool, plus the
// ICE cache size.
type nodeCollector struct {
	cluster *kube.Cluster
	ice     *aws.ICECache
	nodes   *prometheus.Desc
	alloc   *prometheus.Desc
	reqs    *prometheus.Desc
	util    *prometheus.Desc
	iceSize *prometheus.Desc

	// The same counts under the names guides written for Karpenter query
	// (karpenter_nodes_total, karpenter_nodes_utilization).
	karpenterNodes, karpenterUtil *prometheus.Desc
}

func newNodeCollector(c *kube.Cluster, ice *aws.ICECache) *nodeCollector {
	return &nodeCollector{
		cluster: c, ice: ice,
		nodes: prometheus.NewDesc("joinery_nodes_total", "Nodes launched by Joinery, by NodePool.", []string{"nodepool"}, nil),
		alloc: prometheus.NewDesc("joinery_nodes_allocatable", "Summed allocatable of Joinery nodes (cpu in cores, memory in bytes, pods).",
			[]string{"nodepool", "resource"}, nil),
		reqs: prometheus.NewDesc("joinery_nodes_requests", "Summed requests of the pods on Joinery nodes (cpu in cores, memory in bytes, pods).",
			[]string{"nodepool", "resource"}, nil),
		util: prometheus.NewDesc("joinery_nodes_utilization", "Requests divided by allocatable on Joinery nodes (0-1).",
			[]string{"nodepool", "resource"}, nil),
		iceSize: prometheus.NewDesc("joinery_cloud_ice_cache_size", "Offerings marked unavailable after insufficient capacity.", nil, nil),
		karpenterNodes: prometheus.NewDesc("karpenter_nodes_total", "Nodes launched by Joinery, by NodePool (joinery_nodes_total).",
			[]string{"nodepool"}, nil),
		karpenterUtil: prometheus.NewDesc("karpenter_nodes_utilization",
			"Requests divided by allocatable on Joinery nodes (0-1), by NodePool (joinery_nodes_utilization).", []string{"nodepool", "resource"}, nil),
	}
}

func (n *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- n.nodes
	ch <- n.alloc
	ch <- n.reqs
	ch <- n.util
	ch <- n.iceSize
	ch <- n.karpenterNodes
	ch <- n.karpenterUtil
}

func (n *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(n.iceSize, prometheus.GaugeValue, float64(n.ice.Len()))
	nodes, _ := n.cluster.Nodes.List(labels.Everything())
	count := map[string]int{}
	alloc, reqs := map[string]resources.List{}, map[string]resources.List{}
	for _, node := range nodes {
		pool := node.Labels[apiv1.LabelNodePool]
		if pool == "" {
			continue
		}
		count[pool]++
		a, _ := resources.FromResourceList(node.Status.Allocatable)
		alloc[pool] = alloc[pool].Add(a)
		for _, p := range n.cluster.PodsOnNode(node.Name) {
			if kube.IsActive(p) {
				reqs[pool] = reqs[pool].Add(solver.Requests(p))
			}
		}
	}
	for pool, c := range count {
		ch <- prometheus.MustNewConstMetric(n.nodes, prometheus.GaugeValue, float64(c), pool)
		ch <- prometheus.MustNewConstMetric(n.karpenterNodes, prometheus.GaugeValue, float64(c), pool)
		for _, r := range []struct {
			name  string
			idx   int
			scale float64
		}{{"cpu", resources.CPU, 1000}, {"memory", resources.Memory, 1}, {"pods", resources.Pods, 1}} {
			av, rv := float64(alloc[pool][r.idx])/r.scale, float64(reqs[pool][r.idx])/r.scale
			ch <- prometheus.MustNewConstMetric(n.alloc, prometheus.GaugeValue, av, pool, r.name)
			ch <- prometheus.MustNewConstMetric(n.reqs, prometheus.GaugeValue, rv, pool, r.name)
			if av > 0 {
				ch <- prometheus.MustNewConstMetric(n.util, prometheus.GaugeValue, rv/av, pool, r.name)
				ch <- prometheus.MustNewConstMetric(n.karpenterUtil, prometheus.GaugeValue, rv/av, pool, r.name)
			}
		}
	}
}
