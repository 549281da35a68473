// Package workflows holds Joinery's Temporal workflow definitions: durable,
// deterministic sagas (no I/O, no wall clock, no map-order dependence, no
// goroutines outside workflow.Go). They call activities by name, so this
// package imports only the SDK and plain data types. Each workflow's own
// names (type, id, signals, activities) are beside it; this file holds
// what several share.
package workflows

import "go.temporal.io/sdk/temporal"

// TaskQueue is the one task queue the worker polls.
const TaskQueue = "joinery"

// Activity names more than one workflow runs (registered by the
// activities package under these names).
const (
	ActivityTerminateInstance = "TerminateInstance"
	ActivityRecordEvent       = "RecordEvent"
	ActivityTaintDisrupted    = "TaintNodeDisrupted"
	ActivityDrainStep         = "DrainStep"
	ActivityRemoveFinalizers  = "RemoveTerminationFinalizers"
)

// QueryStatus is every workflow's status query.
const QueryStatus = "status"

// Application error types that workflows branch on.
const (
	// ErrInsufficientCapacity: no offering in the request had capacity;
	// details carry the []Offering that failed.
	ErrInsufficientCapacity = "InsufficientCapacity"
	// ErrNodeClaimGone: the NodeClaim object was deleted under the workflow.
	ErrNodeClaimGone = "NodeClaimGone"
	// ErrReplacementFailed: a replacement NodeClaim was deleted before its
	// Node became Ready (launch failed or registration TTL passed).
	ErrReplacementFailed = "ReplacementFailed"
	// ErrNodeClaimFailed: the NodeClaim saga gave up (launch failed, or
	// the node was not Ready within the registration TTL) and compensated.
	ErrNodeClaimFailed = "NodeClaimFailed"
)

// Search attributes on every workflow that touches a node, so the Web UI
// lists a node's whole history (all Keyword).
var (
	SANodeClaim    = temporal.NewSearchAttributeKeyKeyword("NodeClaim")
	SANodeName     = temporal.NewSearchAttributeKeyKeyword("NodeName")
	SANodePool     = temporal.NewSearchAttributeKeyKeyword("NodePool")
	SAInstanceType = temporal.NewSearchAttributeKeyKeyword("InstanceType")
	SACapacityType = temporal.NewSearchAttributeKeyKeyword("CapacityType")
	SAZone         = temporal.NewSearchAttributeKeyKeyword("Zone")
	SAInstanceID   = temporal.NewSearchAttributeKeyKeyword("InstanceID")
	SAPhase        = temporal.NewSearchAttributeKeyKeyword("Phase")
)

// SearchAttributeNames lists the custom search attributes to register.
var SearchAttributeNames = []string{"NodeClaim", "NodeName", "NodePool", "InstanceType", "CapacityType", "Zone", "InstanceID", "Phase"}

// NodeClaim phases (the Phase search attribute).
const (
	PhaseLaunching   = "Launching"
	PhaseLaunched    = "Launched"
	PhaseReady       = "Ready"
	PhaseTerminating = "Terminating"
	PhaseTerminated  = "Terminated"
	PhaseFailed      = "Failed"

	// DrainAndReplace phases.
	PhaseChecking  = "Checking"
	PhaseTainted   = "Tainted"
	PhaseReplacing = "Replacing"
	PhaseDraining  = "Draining"
	PhaseSkipped   = "Skipped"
	PhaseDone      = "Done"
)

// identifying returns the search attribute updates that carry a node name
// or an instance id, or none when private: search attributes are stored and
// indexed in clear by the server, whatever the payload codec does.
func identifying(private bool, u ...temporal.SearchAttributeUpdate) []temporal.SearchAttributeUpdate {
	if private {
		return nil
	}
	return u
}
