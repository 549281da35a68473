package replay

import (
	"strings"
	"time"

	"github.com/joinery/joinery/preview/record"
)

// A recording holds no Events, so what the recorded cluster's disruption
// did is read from the Nodes' taints and the pods' deletions:
//
//   - a pod evicted by disruption is a pod of the workload (not a
//     DaemonSet's, not finished, not in a system namespace) whose
//     deletion began while its node was being drained: tainted by
//     Karpenter (karpenter.sh/disrupted), Cluster Autoscaler
//     (ToBeDeletedByClusterAutoscaler) or the AWS Node Termination
//     Handler, or cordoned. A pod a scale-down deleted on such a node
//     counts too; one evicted from an untainted node does not.
//   - a spot interruption is a spot node that showed a sign of one: the
//     Node Termination Handler's spot-itn taint, or the node going
//     unreachable or shut down (its instance gone before its drain
//     ended). Karpenter drains an interrupted node as it drains a
//     consolidated one, so a spot interruption it handled within the
//     two-minute notice leaves no sign and is not counted.

// drainTaints mark a node being drained (prefixes of taint keys).
var drainTaints = []string{"karpenter.sh/disrupted", "ToBeDeletedByClusterAutoscaler", "aws-node-termination-handler/",
	"node.kubernetes.io/unschedulable"}

// interruptionTaints mark a spot node interrupted.
var interruptionTaints = []string{"aws-node-termination-handler/spot-itn", "node.kubernetes.io/unreachable",
	"node.cloudprovider.kubernetes.io/shutdown"}

// recordedDisruption is when, in the window, the recorded cluster evicted
// pods by disruption and lost spot nodes to interruptions (and which).
type recordedDisruption struct {
	evictions, interruptions []time.Duration
	interrupted              []RecordedNode // one per interruption
}

// readDisruption reads the sorted events of the recording.
func readDisruption(r *record.Recording, events []record.Event) recordedDisruption {
	var d recordedDisruption
	draining := map[string]bool{}    // node -> being drained
	interrupted := map[string]bool{} // spot node -> counted
	goneAtStart := map[string]bool{} // pod uid -> deletion began before the window
	gone := map[string]bool{}
	for _, o := range r.Objects {
		switch o.Kind {
		case "Node":
			draining[nameOf(o.Object)] = nodeDraining(o.Object)
		case "Pod":
			if deleting(o.Object) {
				goneAtStart[uidOf(o.Object)] = true
			}
		}
	}
	for _, e := range events {
		at := e.At.Sub(r.Start)
		switch e.Kind {
		case "Node":
			name := nameOf(e.Object)
			draining[name] = nodeDraining(e.Object)
			if !interrupted[name] && spot(labelsOf(e.Object)) && hasTaint(e.Object, interruptionTaints) {
				interrupted[name] = true
				d.interruptions = append(d.interruptions, at)
				d.interrupted = append(d.interrupted, shapeOf(name, labelsOf(e.Object)))
			}
		case "Pod":
			uid := uidOf(e.Object)
			if gone[uid] || goneAtStart[uid] || (e.Type != "DELETED" && !deleting(e.Object)) {
				continue
			}
			gone[uid] = true
			if evictable(e.Object) && draining[nodeNameOf(e.Object)] {
				d.evictions = append(d.evictions, at)
			}
		}
	}
	return d
}

// between counts the times in (from, to].
func between(times []time.Duration, from, to time.Duration) int {
	n := 0
	for _, t := range times {
		if t > from && t <= to {
			n++
		}
	}
	return n
}

// EvictionsBetween is how many recorded pods were evicted by disruption
// in (from, to] of recorded time; InterruptionsBetween how many spot
// nodes showed an interruption.
func (r Recorded) EvictionsBetween(from, to time.Duration) int {
	return between(r.disruption.evictions, from, to)
}

func (r Recorded) InterruptionsBetween(from, to time.Duration) int {
	return between(r.disruption.interruptions, from, to)
}

// Interruption is a recorded spot interruption: when, and the node's shape.
type Interruption struct {
	At   time.Duration
	Node RecordedNode
}

// Interruptions are the recorded spot interruptions in time order.
func (r Recorded) Interruptions() []Interruption {
	out := make([]Interruption, len(r.disruption.interruptions))
	for i, at := range r.disruption.interruptions {
		out[i] = Interruption{At: at, Node: r.disruption.interrupted[i]}
	}
	return out
}

func deleting(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	return md["deletionTimestamp"] != nil
}

func nodeDraining(obj map[string]any) bool {
	spec, _ := obj["spec"].(map[string]any)
	if u, _ := spec["unschedulable"].(bool); u {
		return true
	}
	return deleting(obj) || hasTaint(obj, drainTaints)
}

func hasTaint(obj map[string]any, prefixes []string) bool {
	spec, _ := obj["spec"].(map[string]any)
	taints, _ := spec["taints"].([]any)
	for _, t := range taints {
		tm, _ := t.(map[string]any)
		key, _ := tm["key"].(string)
		for _, p := range prefixes {
			if strings.HasPrefix(key, p) {
				return true
			}
		}
	}
	return false
}

// spot: Karpenter's, EKS managed node groups' or the common lifecycle label.
func spot(labels map[string]string) bool {
	return labels["karpenter.sh/capacity-type"] == "spot" || labels["eks.amazonaws.com/capacityType"] == "SPOT" ||
		labels["node.kubernetes.io/lifecycle"] == "spot"
}

// evictable: a workload pod a drain evicts (a replay recreates the same).
func evictable(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	if ns, _ := md["namespace"].(string); systemNamespaces[ns] {
		return false
	}
	refs, _ := md["ownerReferences"].([]any)
	for _, ref := range refs {
		if rm, _ := ref.(map[string]any); rm["kind"] == "DaemonSet" {
			return false
		}
	}
	st, _ := obj["status"].(map[string]any)
	phase, _ := st["phase"].(string)
	return phase != "Succeeded" && phase != "Failed"
}
