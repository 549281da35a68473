// Package workflows holds Joinery's Temporal workflow definitions: durable,
// deterministic sagas (no I/O, no wall clock, no map-order dependence, no
// goroutines outside workflow.Go). They call activities by name, so this
// package imports only the SDK and plain data types.
package workflows

import "go.temporal.io/sdk/temporal"

// TaskQueue is the one task queue the worker polls.
const TaskQueue = "joinery"

// Workflow type names.
const (
	ProvisionWorkflow       = "Provision"
	NodeClaimWorkflow       = "NodeClaim"
	DrainAndReplaceWorkflow = "DrainAndReplace"
	// NodeClaimTerminationWorkflow is the ending alone, run as a new run
	// of nodeclaim/<name> when a deleted NodeClaim or Node has no running
	// NodeClaim workflow to signal (it ended, was terminated, or never ran).
	NodeClaimTerminationWorkflow = "NodeClaimTermination"
)

// Activity names (registered by the activities package under these names).
const (
	ActivityPlanProvisioning  = "PlanProvisioning"
	ActivityLaunchInstance    = "LaunchInstance"
	ActivityMarkLaunched      = "MarkNodeClaimLaunched"
	ActivityWaitForNode       = "WaitForNodeReady"
	ActivityTerminateInstance = "TerminateInstance"
	ActivityDeleteNodeClaim   = "DeleteNodeClaim"
	ActivityRecordEvent       = "RecordEvent"

	ActivityCheckCandidate     = "CheckDisruptionCandidate"
	ActivityTaintDisrupted     = "TaintNodeDisrupted"
	ActivityPlanReplacement    = "PlanReplacement"
	ActivityWaitNodeClaimReady = "WaitNodeClaimReady"
	ActivityDrainStep          = "DrainStep"
	ActivityWaitNodeClaimGone  = "WaitNodeClaimGone"

	// The ending of a deleted NodeClaim or Node (finalizer-driven).
	ActivityBeginTermination    = "BeginTermination"
	ActivityWaitVolumesDetached = "WaitVolumesDetached"
	ActivityRemoveFinalizers    = "RemoveTerminationFinalizers"
)

// Signal and query names.
const (
	SignalTerminate = "terminate"
	// SignalDeleted (payload DeletionNotice): the NodeClaim or its Node
	// was deleted; the workflow runs the node's termination.
	SignalDeleted = "deleted"
	QueryStatus   = "status"
)

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

// NodeClaimWorkflowID is the workflow id of a NodeClaim's lifecycle.
func NodeClaimWorkflowID(name string) string { return "nodeclaim/" + name }

// DisruptWorkflowID is the workflow id of a node's drain-and-replace. With
// payload encryption on, node is the node name's pseudonym
// (codec.Keyring.Pseudonym), so the id names no node in clear.
func DisruptWorkflowID(reason, node string) string { return "disrupt/" + reason + "/" + node }

// ProvisionWorkflowID is the workflow id of one provisioning batch.
func ProvisionWorkflowID(batch string) string { return "provision/" + batch }
