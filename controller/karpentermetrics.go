package controller

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// karpenterNodeLabels are Karpenter v1's well-known node labels (core
// and the AWS provider's), each a label of the karpenter_nodes_* series
// named as Karpenter names it: the part after the slash, lower case,
// dashes as underscores.
var karpenterNodeLabels = []string{
	apiv1.LabelNodePool, apiv1.LabelZone, apiv1.LabelRegion, apiv1.LabelInstanceType, apiv1.LabelArch, apiv1.LabelOS,
	apiv1.LabelCapacityType, corev1.LabelWindowsBuild,
	"karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-type",
	"karpenter.k8s.aws/capacity-reservation-interruptible",
	apiv1.LabelInstanceHypervis, "karpenter.k8s.aws/instance-encryption-in-transit-supported", "karpenter.k8s.aws/nitro-sandbox",
	apiv1.LabelInstanceCategory, "karpenter.k8s.aws/instance-capability-flex", apiv1.LabelInstanceFamily, apiv1.LabelInstanceGen,
	apiv1.LabelInstanceSize, apiv1.LabelInstanceNVMe, apiv1.LabelInstanceCPU, apiv1.LabelInstanceCPUManu,
	"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz", apiv1.LabelInstanceMemory, apiv1.LabelInstanceEBSBW,
	apiv1.LabelInstanceNetBW, apiv1.LabelInstanceGPUName, apiv1.LabelInstanceGPUManu, apiv1.LabelInstanceGPUCount,
	apiv1.LabelInstanceGPUMem, apiv1.LabelInstanceAccName, apiv1.LabelInstanceAccManu, apiv1.LabelInstanceAccCount,
	"topology.k8s.aws/zone-id", "karpenter.k8s.aws/instance-tenancy",
	"karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition",
}

// karpenterLabelName is Karpenter's metric label for a node label key.
func karpenterLabelName(key string) string {
	if i := strings.LastIndex(key, "/"); i >= 0 {
		key = key[i+1:]
	}
	return strings.ReplaceAll(strings.ToLower(key), "-", "_")
}

// karpenterResourceName is Karpenter's resource_type value.
func karpenterResourceName(name corev1.ResourceName) string {
	return strings.ReplaceAll(strings.ToLower(string(name)), "-", "_")
}

// karpenterQuantity is a quantity as Karpenter reports it: cpu in cores,
// the rest in units (bytes, counts).
func karpenterQuantity(name corev1.ResourceName, q resource.Quantity) float64 {
	if name == corev1.ResourceCPU {
		return float64(q.MilliValue()) / 1000
	}
	return float64(q.Value())
}

// karpenterCollector computes, at scrape time from the informer caches,
// the karpenter_* gauges Karpenter computes from its cluster state: per
// node (allocatable, pod and DaemonSet requests, system overhead,
// lifetime), per pod (karpenter_pods_state), per NodePool (usage from
// status.resources, limits, cost), and the cluster's (node count,
// utilization).
type karpenterCollector struct {
	cluster *kube.Cluster
	price   func(*corev1.Node) float64 // USD/hour; nil: no cost series
	now     func() time.Time

	nodeLabels []string // metric label names of karpenterNodeLabels, then node_name, phase, managed

	allocatable, podRequests, daemonRequests, overhead, lifetime *prometheus.Desc
	podState                                                     *prometheus.Desc
	usage, limit, cost                                           *prometheus.Desc
	nodeCount, utilization                                       *prometheus.Desc
}

func newKarpenterCollector(c *kube.Cluster, price func(*corev1.Node) float64) *karpenterCollector {
	k := &karpenterCollector{cluster: c, price: price, now: time.Now}
	for _, l := range karpenterNodeLabels {
		k.nodeLabels = append(k.nodeLabels, karpenterLabelName(l))
	}
	k.nodeLabels = append(k.nodeLabels, "node_name", "phase", "managed")
	withResource := append(append([]string{}, k.nodeLabels...), "resource_type")
	d := prometheus.NewDesc
	k.allocatable = d("karpenter_nodes_allocatable", "Node allocatable are the resources allocatable by nodes.", withResource, nil)
	k.podRequests = d("karpenter_nodes_total_pod_requests",
		"Node total pod requests are the resources requested by pods bound to nodes, including the DaemonSet pods.", withResource, nil)
	k.daemonRequests = d("karpenter_nodes_total_daemon_requests",
		"Node total daemon requests are the resource requested by DaemonSet pods bound to nodes.", withResource, nil)
	k.overhead = d("karpenter_nodes_system_overhead",
		"Node system daemon overhead are the resources reserved for system overhead, the difference between the node's capacity and allocatable values are reported by the status.",
		withResource, nil)
	k.lifetime = d("karpenter_nodes_current_lifetime_seconds", "Node age in seconds", k.nodeLabels, nil)
	k.podState = d("karpenter_pods_state",
		"Pod state is the current state of pods. This metric can be used several ways as it is labeled by the pod name, namespace, owner, node, nodepool name, zone, architecture, capacity type, instance type, pod phase, and pod readiness.",
		[]string{"name", "namespace", "owner", "node", "scheduled", "nodepool", "zone", "arch", "capacity_type", "instance_type", "phase", "ready", "managed", "state"}, nil)
	k.usage = d("karpenter_nodepools_usage",
		"The amount of resources that have been provisioned for a nodepool. Labeled by nodepool name and resource type.", []string{"resource_type", "nodepool"}, nil)
	k.limit = d("karpenter_nodepools_limit",
		"Limits specified on the nodepool that restrict the quantity of resources provisioned. Labeled by nodepool name and resource type.", []string{"resource_type", "nodepool"}, nil)
	k.cost = d("karpenter_nodepools_cost_total",
		"Total cost of the nodepool from Karpenter's perspective. Units are determined by the cloud provider. Not an authoritative source for billing. Includes modifications due to NodeOverlays",
		[]string{"nodepool"}, nil)
	k.nodeCount = d("karpenter_cluster_state_node_count", "Current count of nodes in cluster state", nil, nil)
	k.utilization = d("karpenter_cluster_utilization_percent", "Utilization of allocatable resources by pod requests", []string{"resource_type"}, nil)
	return k
}

func (k *karpenterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{k.allocatable, k.podRequests, k.daemonRequests, k.overhead, k.lifetime, k.podState,
		k.usage, k.limit, k.cost, k.nodeCount, k.utilization} {
		ch <- d
	}
}

func (k *karpenterCollector) Collect(ch chan<- prometheus.Metric) {
	nodes, _ := k.cluster.Nodes.List(labels.Everything())
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	ch <- prometheus.MustNewConstMetric(k.nodeCount, prometheus.GaugeValue, float64(len(nodes)))
	byName := map[string]*corev1.Node{}
	clusterAlloc, clusterReqs := corev1.ResourceList{}, corev1.ResourceList{}
	cost := map[string]float64{}
	for _, n := range nodes {
		byName[n.Name] = n
		lv := k.nodeLabelValues(n)
		pods, daemons := podRequests(k.cluster.PodsOnNode(n.Name))
		gauge := func(desc *prometheus.Desc, rl corev1.ResourceList) {
			for name, q := range rl {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, karpenterQuantity(name, q), append(lv, karpenterResourceName(name))...)
			}
		}
		gauge(k.allocatable, n.Status.Allocatable)
		gauge(k.podRequests, pods)
		gauge(k.daemonRequests, daemons)
		gauge(k.overhead, subtract(n.Status.Capacity, n.Status.Allocatable))
		ch <- prometheus.MustNewConstMetric(k.lifetime, prometheus.GaugeValue, k.now().Sub(n.CreationTimestamp.Time).Seconds(), lv...)
		merge(clusterAlloc, n.Status.Allocatable)
		merge(clusterReqs, pods)
		if pool := n.Labels[apiv1.LabelNodePool]; pool != "" && k.price != nil {
			cost[pool] += k.price(n)
		}
	}
	for name, a := range clusterAlloc {
		if a.IsZero() {
			continue
		}
		r := clusterReqs[name]
		ch <- prometheus.MustNewConstMetric(k.utilization, prometheus.GaugeValue,
			100*karpenterQuantity(name, r)/karpenterQuantity(name, a), karpenterResourceName(name))
	}
	pods, _ := k.cluster.Pods.List(labels.Everything())
	for _, p := range pods {
		ch <- prometheus.MustNewConstMetric(k.podState, prometheus.GaugeValue, 1, podStateLabels(p, byName[p.Spec.NodeName])...)
	}
	pools, _ := k.cluster.NodePools()
	for _, np := range pools {
		for name, q := range np.Status.Resources {
			ch <- prometheus.MustNewConstMetric(k.usage, prometheus.GaugeValue, karpenterQuantity(name, q), karpenterResourceName(name), np.Name)
		}
		for name, q := range np.Spec.Limits {
			ch <- prometheus.MustNewConstMetric(k.limit, prometheus.GaugeValue, karpenterQuantity(name, q), karpenterResourceName(name), np.Name)
		}
		if k.price != nil {
			ch <- prometheus.MustNewConstMetric(k.cost, prometheus.GaugeValue, cost[np.Name], np.Name)
		}
	}
}

func (k *karpenterCollector) nodeLabelValues(n *corev1.Node) []string {
	out := make([]string, 0, len(k.nodeLabels)+1)
	for _, l := range karpenterNodeLabels {
		out = append(out, n.Labels[l])
	}
	return append(out, n.Name, string(n.Status.Phase), strconv.FormatBool(n.Labels[apiv1.LabelNodePool] != ""))
}

// podRequests sums the requests of the active pods bound to a node
// (requests as the scheduler counts them: init containers, overhead, and
// one pod each), all of them and the DaemonSet pods alone.
func podRequests(pods []*corev1.Pod) (all, daemons corev1.ResourceList) {
	var a, d resources.List
	for _, p := range pods {
		if !kube.IsActive(p) {
			continue
		}
		r := solver.Requests(p)
		a = a.Add(r)
		if kube.IsDaemonSetPod(p) {
			d = d.Add(r)
		}
	}
	return withPods(a), withPods(d)
}

// withPods is the list as a ResourceList, with cpu, memory and pods
// present even at zero (as Karpenter's requests carry the pod count).
func withPods(l resources.List) corev1.ResourceList {
	rl := l.ToResourceList()
	for _, i := range []int{resources.CPU, resources.Memory, resources.Pods} {
		if _, ok := rl[resources.Names[i]]; !ok {
			rl[resources.Names[i]] = l.Quantity(i)
		}
	}
	return rl
}

func subtract(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range a {
		q = q.DeepCopy()
		if s, ok := b[name]; ok {
			q.Sub(s)
		}
		out[name] = q
	}
	return out
}

func merge(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

// podStateLabels are karpenter_pods_state's label values of a pod on node
// (nil: not bound, or its node unknown). The last, state, is the phase in
// lower case, which guides query (karpenter_pods_state{state="pending"})
// though Karpenter has no such label.
func podStateLabels(p *corev1.Pod, node *corev1.Node) []string {
	owner := ""
	if len(p.OwnerReferences) > 0 {
		o := p.OwnerReferences[0]
		owner = fmt.Sprintf("/apis/%s/namespaces/%s/%ss/%s", o.APIVersion, p.Namespace, strings.ToLower(o.Kind), o.Name)
	}
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	nl := map[string]string{}
	if node != nil {
		nl = node.Labels
	}
	return []string{p.Name, p.Namespace, owner, p.Spec.NodeName, strconv.FormatBool(p.Spec.NodeName != ""),
		nl[apiv1.LabelNodePool], nl[apiv1.LabelZone], nl[apiv1.LabelArch], nl[apiv1.LabelCapacityType], nl[apiv1.LabelInstanceType],
		string(p.Status.Phase), strconv.FormatBool(ready), strconv.FormatBool(nl[apiv1.LabelNodePool] != ""),
		strings.ToLower(string(p.Status.Phase))}
}
