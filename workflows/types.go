package workflows

import (
	"time"

	"github.com/joinery/joinery/api/saga"
)

// ProvisionInput starts one provisioning batch.
type ProvisionInput struct {
	BatchID string `json:"batchId"`
	// PendingPods is how many pods the watcher saw pending (for the history; the
	// plan activity re-reads the cluster).
	PendingPods int `json:"pendingPods"`
	// StaticPool, when set, makes the plan Count NodeClaims of that static
	// NodePool (spec.replicas) instead of planning pending pods.
	StaticPool string `json:"staticPool,omitempty"`
	Count      int    `json:"count,omitempty"`
	// Recreate, when set, makes the plan write NodeClaims of the given
	// shapes instead of planning pending pods (a replay's
	// --rebalance-only recreates the recorded cluster's nodes).
	Recreate []RecreateNodes `json:"recreate,omitempty"`
}

// RecreateNodes are Count nodes of one instance type, zone and capacity
// type, in NodePool when it can hold them, else in the first NodePool
// that can.
type RecreateNodes struct {
	NodePool     string `json:"nodePool,omitempty"`
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	Count        int    `json:"count"`
}

// ProvisionPlan is what the plan activity decided, compact enough for
// workflow history: one entry per new node, plus counts.
type ProvisionPlan struct {
	NodeClaims     []NodeClaimInput `json:"nodeClaims"`
	PodsConsidered int              `json:"podsConsidered"`
	PodsOnExisting int              `json:"podsOnExisting"`
	// Unschedulable lists at most MaxUnschedulableListed pods
	// ("ns/name: reason"); UnschedulableTotal counts them all (0 in
	// histories recorded before it existed: use len(Unschedulable)).
	Unschedulable      []string `json:"unschedulable,omitempty"`
	UnschedulableTotal int      `json:"unschedulableTotal,omitempty"`
	PlannedUSDPerHour  float64  `json:"plannedUsdPerHour"`
	// More is set when the plan wrote only its first MaxNodeClaimsPerPlan
	// NodeClaims (payloads stay far below Temporal's 2 MB blob limit): the
	// workflow starts their sagas and plans again for the pods left.
	More bool `json:"more,omitempty"`
}

// MaxNodeClaimsPerPlan bounds the NodeClaims one plan activity writes and
// returns (about 2 KB of input each).
const MaxNodeClaimsPerPlan = 100

// MaxUnschedulableListed bounds the unschedulable pods a plan lists.
const MaxUnschedulableListed = 50

// unschedulable is the plan's count of pods no node can hold.
func (p *ProvisionPlan) unschedulable() int {
	return max(p.UnschedulableTotal, len(p.Unschedulable))
}

// maxPlanRounds bounds the plan rounds of one Provision batch.
const maxPlanRounds = 50

// ProvisionResult summarises a batch.
type ProvisionResult struct {
	NodeClaims    []string `json:"nodeClaims"`
	Unschedulable int      `json:"unschedulable"`
	PodsPlaced    int      `json:"podsPlaced"`
}

// NodeClaimInput starts a NodeClaim lifecycle. The NodeClaim object already
// exists (the plan activity writes it, with the pods nominated to it).
type NodeClaimInput struct {
	Name     string `json:"name"`
	NodePool string `json:"nodePool"`
	// Offerings to try, cheapest first.
	Offerings []saga.Offering `json:"offerings"`
	Pods      int             `json:"pods"`
	// RegistrationTTL: an instance whose Node is not Ready by then is
	// terminated (compensation). Zero means 15 minutes.
	RegistrationTTL time.Duration `json:"registrationTtl"`
	// LaunchAttempts bounds how many CreateFleet calls the saga makes while
	// offerings fail with insufficient capacity. Zero means 5.
	LaunchAttempts int `json:"launchAttempts"`
	// Private (payload encryption on): the workflow sets no search
	// attribute holding an instance id or a node name, since the server
	// stores those in clear. False in histories recorded before it existed.
	Private bool `json:"private,omitempty"`
}

// LaunchRequest asks the cloud for one instance.
type LaunchRequest struct {
	NodeClaim    string          `json:"nodeClaim"`
	NodePool     string          `json:"nodePool"`
	CapacityType string          `json:"capacityType"`
	Offerings    []saga.Offering `json:"offerings"` // same capacity type, cheapest first
	// Pods is how many pods the plan put on the node: the launch predicts
	// the subnet addresses it takes from them.
	Pods int `json:"pods,omitempty"`
}

// Instance is a launched EC2 instance.
type Instance struct {
	ID           string  `json:"id"`
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	ProviderID   string  `json:"providerID"`
	Price        float64 `json:"price"`
	// CapacityReservationID is the reservation a reserved instance runs in.
	CapacityReservationID string `json:"capacityReservationID,omitempty"`
	// ReservationType ("default", "capacity-block"; "" in older
	// histories: default) and ReservationInterruptible are that
	// reservation's kind (its node's labels).
	ReservationType          string `json:"reservationType,omitempty"`
	ReservationInterruptible bool   `json:"reservationInterruptible,omitempty"`
	// What the instance was launched with, for drift.
	ImageID          string   `json:"imageID,omitempty"`
	SubnetID         string   `json:"subnetID,omitempty"`
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`
}

// NodeReady is returned once the Node of an instance is registered, Ready
// and initialized (startup taints gone).
type NodeReady struct {
	NodeName string `json:"nodeName"`
}

// TerminateRequest ends an instance and its Node/NodeClaim objects.
type TerminateRequest struct {
	NodeClaim  string `json:"nodeClaim"`
	InstanceID string `json:"instanceId"`
	NodeName   string `json:"nodeName,omitempty"`
	Reason     string `json:"reason"`
	// InstanceOnly: terminate the instance and wait until it is gone, but
	// leave the Node and NodeClaim (RemoveTerminationFinalizers releases them).
	InstanceOnly bool `json:"instanceOnly,omitempty"`
}

// EventRequest records a Kubernetes Event on a NodeClaim, or on a Node
// when Node is set.
type EventRequest struct {
	NodeClaim string `json:"nodeClaim,omitempty"`
	Node      string `json:"node,omitempty"`
	Type      string `json:"type"` // Normal or Warning
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// NodeClaimStatus is the answer of the status query.
type NodeClaimStatus struct {
	Phase       string   `json:"phase"`
	Instance    Instance `json:"instance"`
	NodeName    string   `json:"nodeName,omitempty"`
	Failure     string   `json:"failure,omitempty"`
	LaunchTries int      `json:"launchTries"`
}
