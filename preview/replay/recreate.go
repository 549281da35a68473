package replay

import (
	"sort"
	"time"

	"github.com/joinery/joinery/preview/record"
)

// RecordedNode is the shape of one recorded node, by its labels: what a
// --rebalance-only replay buys in its place.
type RecordedNode struct {
	Name         string
	NodePool     string // karpenter.sh/nodepool, when it had one
	InstanceType string
	Zone         string
	CapacityType string // spot or on-demand
}

// NodeStep is a recorded node to recreate at At (recorded time since the
// start; 0: before the replay starts).
type NodeStep struct {
	At   time.Duration
	Node RecordedNode
}

// NodeTimeline is when the recorded cluster got each of its nodes, in
// time order: those listed at the start (but those already being
// deleted), then each one the watch saw added, shaped by the last labels
// it had (a node registers before its instance type is labelled). Nodes
// whose instance type the recording never saw are left out. Removals are
// not steps: what to remove is left to the replay's consolidation.
func NodeTimeline(r *record.Recording) []NodeStep {
	first := map[string]time.Duration{}
	labels := map[string]map[string]string{}
	var order []string
	see := func(at time.Duration, obj map[string]any) {
		name := nameOf(obj)
		if _, ok := first[name]; !ok {
			first[name] = at
			order = append(order, name)
		}
		if l := labelsOf(obj); instanceType(l) != "" {
			labels[name] = l
		}
	}
	for _, o := range r.Objects {
		if o.Kind == "Node" && !deleting(o.Object) {
			see(0, o.Object)
		}
	}
	for _, e := range r.Events {
		if e.Kind == "Node" && e.Type != "DELETED" {
			see(e.At.Sub(r.Start), e.Object)
		}
	}
	var steps []NodeStep
	for _, name := range order {
		if l := labels[name]; l != nil {
			steps = append(steps, NodeStep{At: first[name], Node: shapeOf(name, l)})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At < steps[j].At })
	return steps
}

// shapeOf is a recorded node's shape by its labels.
func shapeOf(name string, l map[string]string) RecordedNode {
	return RecordedNode{Name: name, NodePool: l["karpenter.sh/nodepool"], InstanceType: instanceType(l),
		Zone: firstLabel(l, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"), CapacityType: capacityType(l)}
}

func instanceType(l map[string]string) string {
	return firstLabel(l, "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
}

// capacityType is Karpenter's label, else spot for a spot node (spot),
// else on-demand.
func capacityType(l map[string]string) string {
	if ct := l["karpenter.sh/capacity-type"]; ct != "" {
		return ct
	}
	if spot(l) {
		return "spot"
	}
	return "on-demand"
}

func firstLabel(l map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := l[k]; v != "" {
			return v
		}
	}
	return ""
}
