package workflows

import (
	"time"

	"github.com/joinery/joinery/api/saga"
)

// Interruption handling: names, ids and types.
const (
	InterruptionWorkflow       = "Interruption"
	InterruptionPollerWorkflow = "InterruptionPoller"
	// InterruptionPollerWorkflowID is the singleton poller: however many
	// workers run, one of them long-polls the queue at a time.
	InterruptionPollerWorkflowID = "interruption-poller"

	ActivityPollInterruptionQueue     = "PollInterruptionQueue"
	ActivityLookupInterruptedInstance = "LookupInterruptedInstance"
	ActivityMarkOfferingUnavailable   = "MarkOfferingUnavailable"
	ActivityRecordInterruption        = "RecordInterruption"

	// ErrNoInterruptionQueue: the worker running the poll activity has no
	// queue configured (the poller workflow then ends).
	ErrNoInterruptionQueue = "NoInterruptionQueue"

	// PhaseInterrupted: the Interruption workflow handed the node to a
	// DrainAndReplace child (or terminated its NodeClaim).
	PhaseInterrupted = "Interrupted"
)

// Interruption actions (the action label of joinery_interruption_actions_total).
const (
	// ActionCordonAndDrain: taint, launch replacements, drain (do-not-disrupt
	// pods too, budgets ignored) and terminate, within the notice.
	ActionCordonAndDrain = "CordonAndDrain"
	// ActionTerminate: the instance has no Node yet; its NodeClaim is
	// terminated so its pods are provisioned again.
	ActionTerminate = "Terminate"
	// ActionNoAction: an Event and a metric only (rebalance recommendation,
	// an instance Joinery did not launch, a node already being disrupted).
	ActionNoAction = "NoAction"
)

// InterruptionWorkflowID is interruption/<instance-id>/<kind>: one
// workflow per instance and kind of event, so a message SQS delivers twice,
// or a second event of a kind already handled, starts nothing. With payload
// encryption on, instanceID is the instance id's pseudonym.
func InterruptionWorkflowID(instanceID, kind string) string {
	return "interruption/" + instanceID + "/" + kind
}

// interruptionKinds in order of what they ask of Joinery: a hint to
// rebalance, a maintenance to come, a reclaim in two minutes, the instance
// going now.
var interruptionKinds = []struct {
	kind     string
	severity int
}{
	{saga.KindRebalanceRecommendation, 1}, {saga.KindScheduledChange, 2}, {saga.KindCapacityBlockExpiring, 2},
	{saga.KindSpotInterrupted, 3}, {saga.KindCapacityReservationInterrupted, 3},
	{saga.KindInstanceStopped, 4}, {saga.KindInstanceTerminated, 4},
}

// InterruptionSeverity is how much an event of the kind asks of Joinery
// (0: a kind it does not act on).
func InterruptionSeverity(kind string) int {
	for _, k := range interruptionKinds {
		if k.kind == kind {
			return k.severity
		}
	}
	return 0
}

// SupersedingKinds are the other kinds whose handling, for the same
// instance, leaves nothing for an event of this kind to do: those asking
// as much or more. An interruption's handling only escalates: an event
// arriving after one of them, late or merely weaker, acts no more (a
// rebalance recommendation after the spot warning for the same instance).
func SupersedingKinds(kind string) []string {
	sev := InterruptionSeverity(kind)
	var out []string
	for _, k := range interruptionKinds {
		if sev > 0 && k.kind != kind && k.severity >= sev {
			out = append(out, k.kind)
		}
	}
	return out
}

// InterruptionInput is one instance's part of one interruption event.
type InterruptionInput struct {
	EventID    string    `json:"eventId"`
	Kind       string    `json:"kind"`
	InstanceID string    `json:"instanceId"`
	Time       time.Time `json:"time"` // when the event was emitted
	// NoticeEnd is when the instance goes away (zero: unknown, e.g. a
	// rebalance recommendation). Pods still on the node at NoticeEnd minus
	// their grace period are deleted, even if a PDB blocks their eviction.
	NoticeEnd time.Time `json:"noticeEnd,omitempty"`
	State     string    `json:"state,omitempty"`  // state change: the new state
	Action    string    `json:"action,omitempty"` // spot: terminate, stop or hibernate
	// DrainOnRebalance treats a rebalance recommendation like a spot
	// interruption warning (the worker's --interruption-rebalance-drain).
	DrainOnRebalance bool   `json:"drainOnRebalance,omitempty"`
	MessageID        string `json:"messageId,omitempty"` // the SQS message, for the history
	// Private (payload encryption on): the workflow id is
	// interruption/<pseudonym of the instance id>/<event id>, and no search
	// attribute holds the instance id or node name.
	Private bool `json:"private,omitempty"`
}

// InterruptionTarget is what Joinery knows of the interrupted instance.
type InterruptionTarget struct {
	NodeClaim    string `json:"nodeClaim,omitempty"` // empty: not launched by Joinery
	NodeName     string `json:"nodeName,omitempty"`  // empty: no Node registered yet
	NodePool     string `json:"nodePool,omitempty"`
	InstanceType string `json:"instanceType,omitempty"`
	Zone         string `json:"zone,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	// CapacityReservationID is the reservation the instance runs in
	// (its NodeClaim's karpenter.k8s.aws/capacity-reservation-id).
	CapacityReservationID string `json:"capacityReservationID,omitempty"`
	// DisruptingFor is the reason of a disruption already under way
	// (the NodeClaim's DisruptionReason condition); empty when none.
	DisruptingFor string `json:"disruptingFor,omitempty"`
	// NodeRef is the node name's pseudonym, set when payload encryption is
	// on: the DrainAndReplace child is disrupt/interruption/<NodeRef>.
	NodeRef string `json:"nodeRef,omitempty"`
}

// InterruptionNote is recorded as a Kubernetes Event on the Node (and the
// NodeClaim) and counted in joinery_interruption_actions_total{action}.
type InterruptionNote struct {
	Kind       string `json:"kind"`
	Action     string `json:"action"`
	EventID    string `json:"eventId"`
	InstanceID string `json:"instanceId"`
	NodeName   string `json:"nodeName,omitempty"`
	NodeClaim  string `json:"nodeClaim,omitempty"`
	Message    string `json:"message"`
}

// InterruptionResult is how an Interruption workflow ended.
type InterruptionResult struct {
	Action    string         `json:"action"`
	Outcome   string         `json:"outcome"` // PhaseDone or PhaseSkipped
	Why       string         `json:"why,omitempty"`
	NodeName  string         `json:"nodeName,omitempty"`
	NodeClaim string         `json:"nodeClaim,omitempty"`
	Disrupt   *DisruptResult `json:"disrupt,omitempty"` // the DrainAndReplace child's result
}

// PollerInput runs the interruption queue poller.
type PollerInput struct {
	// QueueURL is informative (the worker polls the queue it is configured with).
	QueueURL string `json:"queueUrl"`
	// RunFor is how long one poll activity runs before it returns (default 5 min).
	RunFor time.Duration `json:"runFor,omitempty"`
}

// PollResult counts what one poll activity did.
type PollResult struct {
	Received   int `json:"received"`
	Started    int `json:"started"`    // Interruption workflows started
	Ignored    int `json:"ignored"`    // unknown kinds and no-ops, deleted
	Unparsable int `json:"unparsable"` // logged, counted and deleted
	Failed     int `json:"failed"`     // left on the queue for redelivery
	// Duplicates: instance events already handled (SQS delivered the
	// message again, or the kind came before for the instance).
	Duplicates int `json:"duplicates,omitempty"`
	// Superseded: instance events a stronger one for the same instance
	// was handled before (SupersedingKinds).
	Superseded int `json:"superseded,omitempty"`
}
