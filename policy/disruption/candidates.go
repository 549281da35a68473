package disruption

import (
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Claim is one NodeClaim with what the caches hold about it: the input of
// candidate filtering.
type Claim struct {
	Claim *apiv1.NodeClaim
	Node  *corev1.Node        // nil: not in the cache
	Pool  *apiv1.NodePool     // nil: gone
	Class *apiv1.EC2NodeClass // nil: gone (nothing to drift from)
	// Offered is what Class can launch (ClassOfferings; nil: not known).
	Offered Offered
	Price   float64 // the node's price, USD/hour
	// Nominating: the NodeClaim still holds nominations for pending pods.
	Nominating bool
	// Booked names what holds the node for a gang (a ProvisioningRequest
	// and until when; "" for none): it is not disrupted meanwhile.
	Booked string
	Pods   []Pod // the pods bound to the node
	// BufferPods are the capacity buffers' virtual pods placed on the
	// node: it is not empty, and consolidation must find them room.
	BufferPods int
}

// Pod is what candidate filtering needs to know of a pod on a node.
type Pod struct {
	Name          string // namespace/name, for the reasons
	Active        bool   // neither Succeeded nor Failed
	DoNotDisrupt  bool   // karpenter.sh/do-not-disrupt protects it now (PodProtection)
	Reschedulable bool   // must find a new home when the node goes
	Controlled    bool   // something (ReplicaSet, Job...) recreates it
	// Blocked: its eviction would be refused: a PodDisruptionBudget that
	// selects it allows no disruption, or more than one selects it.
	Blocked bool
	// Annotations and Priority give its EvictionCost.
	Annotations map[string]string
	Priority    *int32
	// PDBs name (namespace/name) the budgets that block it: the one that
	// allows nothing, or every one when several select it.
	PDBs []string
	// DoNotDisruptUntil is when a duration annotation's protection ends
	// (zero: "true", or not started).
	DoNotDisruptUntil time.Time
}

// Candidate is a node voluntary disruption may take.
type Candidate struct {
	Node  *corev1.Node
	Claim *apiv1.NodeClaim
	Pool  *apiv1.NodePool
	Class *apiv1.EC2NodeClass // nil: gone
	// Offered is what Class can launch (ClassOfferings; nil: not known).
	Offered Offered
	Price   float64 // USD/hour
	Pods    int     // reschedulable pods
	// RescheduleDisruptionCost: 1 plus each reschedulable pod's
	// EvictionCost floored at 0 (see DisruptionCost).
	RescheduleDisruptionCost float64
	// BufferPods: the capacity buffers' virtual pods on the node (see Claim).
	BufferPods int
}

// candidatesByNode indexes cands by node name: a decision names its nodes,
// and its rechecks look each one up among the current candidates.
func candidatesByNode(cands []Candidate) map[string]Candidate {
	byName := make(map[string]Candidate, len(cands))
	for _, c := range cands {
		byName[c.Node.Name] = c
	}
	return byName
}

// Unsettled says why no disruption may be decided now ("": none): pods
// are pending that no NodeClaim was launched for, or a NodeClaim is still
// launching.
func Unsettled(pending int, claims []*apiv1.NodeClaim) string {
	if pending > 0 {
		return fmt.Sprintf("not quiet: %d pods pending", pending)
	}
	for _, nc := range claims {
		if !Initialized(nc) {
			return "not quiet: nodeclaim " + nc.Name + " is launching"
		}
	}
	return ""
}

// Candidates lists the nodes voluntary disruption may take, in claim
// order: launched by Joinery and initialized, not already disrupted, not
// annotated (nor any pod) do-not-disrupt, not holding nominations for
// pending pods, no pod behind a PodDisruptionBudget that allows no
// disruption, and no pod that no controller owns (evicting it would lose
// it, as kubectl drain warns). Filter also says why the others are not.
func Candidates(claims []Claim) []Candidate {
	out, _ := Filter(claims)
	return out
}

// Initialized reports whether a NodeClaim's Initialized condition is True.
func Initialized(nc *apiv1.NodeClaim) bool { return !InitializedAt(nc).IsZero() }

// InitializedAt is when a NodeClaim became Initialized (zero: not yet).
func InitializedAt(nc *apiv1.NodeClaim) time.Time {
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionInitialized && c.Status == "True" {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
