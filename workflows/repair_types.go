package workflows

import "time"

// The Repair saga's names.
const (
	RepairWorkflow = "Repair"
	// ActivityDeleteNodePods deletes the pods of an unreachable node at
	// once (grace 0: no kubelet is left to confirm a graceful exit).
	ActivityDeleteNodePods = "DeleteNodePods"

	// Event reasons of a repair (on the Node; NodeRepairBlocked also on
	// the NodePool), as Karpenter names the blocked one.
	EventNodeRepair        = "NodeRepair"
	EventNodeRepairBlocked = "NodeRepairBlocked"
)

// RepairWorkflowID is repair/<node>: one repair per node at a time, so a
// watcher that sees the node again starts nothing. With payload
// encryption on, node is the node name's pseudonym.
func RepairWorkflowID(node string) string { return "repair/" + node }

// RepairInput starts the repair of one unhealthy node.
type RepairInput struct {
	NodeName string `json:"nodeName"`
	// Condition and Status name the signal whose toleration ran out
	// (AcceleratedHardwareReady False, Ready Unknown, EC2InstanceStatus
	// impaired), Since when it has held, Toleration the policy's.
	Condition  string        `json:"condition"`
	Status     string        `json:"status"`
	Since      time.Time     `json:"since"`
	Toleration time.Duration `json:"toleration"`
	Message    string        `json:"message,omitempty"`
	// Unreachable: the kubelet stopped posting status. No drain is
	// possible: the node's pods are deleted and the instance terminated
	// at once, without waiting for a replacement.
	Unreachable bool `json:"unreachable,omitempty"`
	// Private (payload encryption on): no search attribute holds the
	// node name or instance id.
	Private bool `json:"private,omitempty"`
}

// RepairResult is how a repair ended.
type RepairResult struct {
	Outcome      string   `json:"outcome"` // PhaseDone or PhaseSkipped
	Why          string   `json:"why,omitempty"`
	Replacements []string `json:"replacements,omitempty"`
	// ReplacementFailed: the replacement was not Ready; the node was
	// drained anyway (it is broken), its pods provisioned afresh.
	ReplacementFailed string `json:"replacementFailed,omitempty"`
	Evicted           int    `json:"evicted"`
	Deleted           int    `json:"deleted"`
}
