package world

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// ExpectedPods counts the pods the workloads in objs ask for: replicas of
// Deployments, ReplicaSets and StatefulSets, min(parallelism, completions)
// of Jobs, and bare Pods, with the namespaces they live in.
func ExpectedPods(objs []*unstructured.Unstructured) (int, []string) {
	n := 0
	nss := map[string]bool{}
	for _, o := range objs {
		ns := o.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		add := 0
		switch o.GetKind() {
		case "Deployment", "ReplicaSet", "StatefulSet":
			add = intField(o, 1, "spec", "replicas")
		case "Job":
			add = intField(o, 1, "spec", "parallelism")
			if c := intField(o, add, "spec", "completions"); c < add {
				add = c
			}
		case "Pod":
			add = 1
		}
		if add > 0 {
			n += add
			nss[ns] = true
		}
	}
	var list []string
	for ns := range nss {
		list = append(list, ns)
	}
	sort.Strings(list)
	return n, list
}

// Settled describes the cluster once every expected pod runs.
type Settled struct {
	PodsRunning int
	Nodes       []NodeSummary
	USDPerHour  float64
}

// NodeSummary is one group of identical Joinery nodes.
type NodeSummary struct {
	NodePool, InstanceType, CapacityType, Zone string
	Count                                      int
	USDPerHour                                 float64 // for the whole group
}

// WaitSettled polls until at least want pods in namespaces are Running (or
// Succeeded) on
// Joinery nodes (label karpenter.sh/nodepool) and none there is Pending, or
// ctx ends (then the error lists what is still pending and why).
func WaitSettled(ctx context.Context, kc kubernetes.Interface, want int, namespaces []string) (*Settled, error) {
	for {
		running, pending, err := count(ctx, kc, namespaces)
		if err == nil && running >= want && len(pending) == 0 {
			return Summarize(ctx, kc, running)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not settled: %d/%d pods Running on Joinery nodes; pending: %s", running, want, strings.Join(pending, "; "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func count(ctx context.Context, kc kubernetes.Interface, namespaces []string) (int, []string, error) {
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool})
	if err != nil {
		return 0, nil, err
	}
	joinery := map[string]bool{}
	for _, n := range nodes.Items {
		joinery[n.Name] = true
	}
	running := 0
	var pending []string
	for _, ns := range namespaces {
		pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, nil, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			switch {
			case (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded) && joinery[p.Spec.NodeName]:
				// Job pods may already have finished (kwok completes them).
				running++
			case p.Status.Phase == corev1.PodPending:
				why := ""
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
						why = " (" + c.Message + ")"
					}
				}
				pending = append(pending, p.Namespace+"/"+p.Name+why)
			}
		}
	}
	sort.Strings(pending)
	if len(pending) > 5 {
		pending = append(pending[:5], fmt.Sprintf("... %d more", len(pending)-5))
	}
	return running, pending, nil
}

// Summarize groups Joinery's nodes by NodePool, instance type, capacity
// type and zone, priced from the catalog (USD/hour).
func Summarize(ctx context.Context, kc kubernetes.Interface, podsRunning int) (*Settled, error) {
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool})
	if err != nil {
		return nil, err
	}
	cat := catalog.MustDefault()
	groups := map[NodeSummary]int{}
	for _, n := range nodes.Items {
		k := NodeSummary{NodePool: n.Labels[apiv1.LabelNodePool], InstanceType: n.Labels[apiv1.LabelInstanceType],
			CapacityType: n.Labels[apiv1.LabelCapacityType], Zone: n.Labels[apiv1.LabelZone]}
		groups[k]++
	}
	s := &Settled{PodsRunning: podsRunning}
	for k, c := range groups {
		k.Count = c
		if it, ok := cat.Get(k.InstanceType); ok {
			k.USDPerHour = it.ListPrice(k.CapacityType) * float64(c)
		}
		s.USDPerHour += k.USDPerHour
		s.Nodes = append(s.Nodes, k)
	}
	sort.Slice(s.Nodes, func(i, j int) bool {
		a, b := s.Nodes[i], s.Nodes[j]
		return a.NodePool+a.InstanceType+a.CapacityType+a.Zone < b.NodePool+b.InstanceType+b.CapacityType+b.Zone
	})
	return s, nil
}

// Reprice prices every group with price (instance type, zone, capacity
// type -> USD/hour of one node; false leaves the group's price) and sums
// the total again.
func (s *Settled) Reprice(price func(instanceType, zone, capacityType string) (float64, bool)) {
	s.USDPerHour = 0
	for i, g := range s.Nodes {
		if p, ok := price(g.InstanceType, g.Zone, g.CapacityType); ok {
			s.Nodes[i].USDPerHour = p * float64(g.Count)
		}
		s.USDPerHour += s.Nodes[i].USDPerHour
	}
}

// Price is what a node costs in this world (USD/hour): the local EC2's
// spot price of the type in the zone, or the region's on-demand price
// (the embedded price, times the region's factor outside us-east-1).
func (w *World) Price(instanceType, zone, capacityType string) (float64, bool) {
	if capacityType == apiv1.CapacityTypeSpot {
		return w.EC2.SpotPrice(instanceType, zone)
	}
	it, ok := w.EC2.Options().Catalog.Get(instanceType)
	if !ok {
		return 0, false
	}
	return w.EC2.OnDemandPrice(it), true
}

// Print writes the summary table.
func (s *Settled) Print(w io.Writer) {
	n := 0
	for _, g := range s.Nodes {
		n += g.Count
	}
	fmt.Fprintf(w, "Nodes launched by Joinery: %d\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODEPOOL\tINSTANCE TYPE\tCAPACITY TYPE\tZONE\tNODES\tUSD/HOUR")
	for _, g := range s.Nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%.4f\n", g.NodePool, g.InstanceType, g.CapacityType, g.Zone, g.Count, g.USDPerHour)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "Total: %.4f USD/hour for %d pods Running\n", s.USDPerHour, s.PodsRunning)
}

// intField reads an integer field that YAML decoding may have made an
// int64 or a float64; def when absent.
func intField(o *unstructured.Unstructured, def int, path ...string) int {
	v, found, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	if !found {
		return def
	}
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return def
}
