package workflows

import "time"

// The ending of a deleted NodeClaim or Node (finalizer-driven): its names.
const (
	// NodeClaimTerminationWorkflow is the ending alone, run as a new run
	// of nodeclaim/<name> when a deleted NodeClaim or Node has no running
	// NodeClaim workflow to signal (it ended, was terminated, or never ran).
	NodeClaimTerminationWorkflow = "NodeClaimTermination"

	ActivityBeginTermination    = "BeginTermination"
	ActivityWaitVolumesDetached = "WaitVolumesDetached"
)

// Objects a DeletionNotice names.
const (
	ObjectNodeClaim = "NodeClaim"
	ObjectNode      = "Node"
)

// DeletionNotice is the payload of SignalDeleted: which object was
// deleted, and when (its deletionTimestamp).
type DeletionNotice struct {
	Object    string    `json:"object"` // ObjectNodeClaim or ObjectNode
	Name      string    `json:"name"`
	NodeClaim string    `json:"nodeClaim"`
	At        time.Time `json:"at"`
}

// TerminationRequest starts the ending of one node. NodeName and
// InstanceID are what the caller knows; BeginTermination completes them
// from the NodeClaim.
type TerminationRequest struct {
	NodeClaim  string `json:"nodeClaim"`
	NodeName   string `json:"nodeName,omitempty"`
	InstanceID string `json:"instanceId,omitempty"`
	Reason     string `json:"reason"`
	// Private: no search attribute holds the node name or instance id.
	Private bool `json:"private,omitempty"`
}

// TerminationPlan is what BeginTermination found and did: the NodeClaim
// and its Node are deleted (their finalizers hold them), and Deadline is
// the NodeClaim's deletion time plus its terminationGracePeriod (zero:
// none), stamped as karpenter.sh/nodeclaim-termination-timestamp.
type TerminationPlan struct {
	NodeName   string    `json:"nodeName,omitempty"`
	InstanceID string    `json:"instanceId,omitempty"`
	NodePool   string    `json:"nodePool,omitempty"`
	Deadline   time.Time `json:"deadline,omitempty"`
}

// VolumeWait asks to wait until no VolumeAttachment names the node, or
// Until (wall clock) passes.
type VolumeWait struct {
	NodeName string    `json:"nodeName"`
	Until    time.Time `json:"until"`
}

// VolumeStatus is how the wait ended: Attached lists what was still
// attached when it gave up (TimedOut).
type VolumeStatus struct {
	Attached []string `json:"attached,omitempty"`
	TimedOut bool     `json:"timedOut,omitempty"`
}

// TerminationResult sums up an ending.
type TerminationResult struct {
	NodeName    string   `json:"nodeName,omitempty"`
	InstanceID  string   `json:"instanceId,omitempty"`
	Evicted     int      `json:"evicted"`
	Deleted     int      `json:"deleted"`
	VolumesLeft []string `json:"volumesLeft,omitempty"`
}

// MaxVolumeDetachWait bounds the wait for volumes when the NodeClaim has
// no terminationGracePeriod (with one, the wait ends at its deadline).
const MaxVolumeDetachWait = 5 * time.Minute
