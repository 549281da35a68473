package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// ConsolidationWorkflow is the singleton that decides voluntary disruption.
const (
	ConsolidationWorkflow   = "Consolidation"
	ConsolidationWorkflowID = "consolidation"

	SignalPauseDisruption  = "pause-disruption"
	SignalResumeDisruption = "resume-disruption"

	ActivityComputeDisruption  = "ComputeDisruption"
	ActivityValidateDisruption = "ValidateDisruption"
)

// Disruption methods, tried in this order each pass; one acts per pass.
// MethodExpiration is no longer one of them (an expired NodeClaim is
// deleted by the controller's expiration reconciler); decisions recorded
// before may still carry it.
const (
	MethodEmptiness  = "emptiness"
	MethodDrift      = "drift"
	MethodExpiration = "expiration"
	MethodMultiNode  = "multi-node"
	MethodSingleNode = "single-node"
)

// ConsolidationInput starts (or continues-as-new) the Consolidation loop.
type ConsolidationInput struct {
	// PassInterval between decisions (default 10 s); ValidationDelay before
	// a consolidation decision is re-simulated (default 15 s).
	PassInterval    time.Duration      `json:"passInterval,omitempty"`
	ValidationDelay time.Duration      `json:"validationDelay,omitempty"`
	State           ConsolidationState `json:"state"`
}

// ConsolidationState is carried across continue-as-new.
type ConsolidationState struct {
	Paused      bool      `json:"paused,omitempty"`
	PausedUntil time.Time `json:"pausedUntil,omitempty"` // zero: until resumed
	PauseReason string    `json:"pauseReason,omitempty"`
	// History holds the last decisions, newest last.
	History []DecisionRecord `json:"history,omitempty"`
	// USDPerHour is the cluster's node cost at the last pass (after
	// NodeOverlays); ListUSDPerHour the same nodes at list prices.
	USDPerHour     float64 `json:"usdPerHour"`
	ListUSDPerHour float64 `json:"listUsdPerHour,omitempty"`
	// Catalog says, at the last pass, where the catalog's facts came from
	// (each live source, or the fallback in use and why).
	Catalog string `json:"catalog,omitempty"`
	Passes  int    `json:"passes"`
	// DriftBackoff holds, by NodePool name, the pools whose drift
	// replacements failed last (see driftbackoff.go).
	DriftBackoff map[string]DriftBackoff `json:"driftBackoff,omitempty"`
	// LastPass is what the last pass that asked for a decision found
	// (nil until one did, and in states written before it existed).
	LastPass *PassReport `json:"lastPass,omitempty"`
}

// PassReport is one pass's outcome and why nodes were not disrupted.
type PassReport struct {
	At  time.Time `json:"at"`
	Why string    `json:"why"` // the decision's Why
	// Eligible is how many nodes were candidates.
	Eligible int `json:"eligible"`
	BlockedReport
}

// MaxBlockedReported bounds the nodes a pass report lists (the counts
// cover every node).
const MaxBlockedReported = 50

// BlockedReport lists nodes that were not disrupted, with their reasons.
type BlockedReport struct {
	// Nodes are at most MaxBlockedReported nodes, those with a reason that
	// is an Event (a block, not a state such as launching) first.
	Nodes []BlockedNode `json:"nodes,omitempty"`
	// Total is how many nodes had a reason; ByReason counts them by reason
	// (a node with two reasons counts under both).
	Total    int            `json:"total,omitempty"`
	ByReason map[string]int `json:"byReason,omitempty"`
}

// Digest identifies a report's content (nodes, reasons, counts).
func (r BlockedReport) Digest() string {
	b, _ := json.Marshal(r) // plain data; map keys sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// BlockedNode is one node and every reason it was not disrupted.
type BlockedNode struct {
	Node      string        `json:"node,omitempty"` // empty before the Node registered
	NodeClaim string        `json:"nodeClaim"`
	NodePool  string        `json:"nodePool,omitempty"`
	Reasons   []BlockReason `json:"reasons"`
}

// BlockReason is one reason: its kind (the metric label), the Event
// reason it is published under ("" for none) and the Event's message.
type BlockReason struct {
	Reason  string `json:"reason"`
	Event   string `json:"event,omitempty"`
	Message string `json:"message"`
}

// PauseRequest is the pause-disruption signal's payload.
type PauseRequest struct {
	Duration time.Duration `json:"duration,omitempty"` // zero: until resumed
	Reason   string        `json:"reason"`
}

// DisruptionPass asks for one decision at workflow time Now.
type DisruptionPass struct {
	Now time.Time `json:"now"`
	// DriftNotBefore holds, by NodePool name, until when the pool's drift
	// is backed off (ConsolidationState.DriftBackoff).
	DriftNotBefore map[string]time.Time `json:"driftNotBefore,omitempty"`
	// Reported is the Digest of the blocked-node report the workflow
	// holds: an identical new report comes back as BlockedUnchanged, so a
	// steady cluster does not write the same report into every pass's
	// history.
	Reported string `json:"reported,omitempty"`
}

// DisruptionDecision is one pass's answer.
type DisruptionDecision struct {
	Method string   `json:"method,omitempty"` // empty: nothing to do
	Reason string   `json:"reason,omitempty"` // DrainAndReplace reason
	Nodes  []string `json:"nodes,omitempty"`
	// NodePool is the NodePool of the nodes (set by drift: its back-off
	// is per pool).
	NodePool string `json:"nodePool,omitempty"`
	// NodeRefs, set by the decision activity when payload encryption is on,
	// are the pseudonyms of Nodes (same order): the DrainAndReplace
	// children are then disrupt/<reason>/<pseudonym>, Private, with no
	// NodeName search attribute.
	NodeRefs []string `json:"nodeRefs,omitempty"`
	// Replace launches replacement capacity first: drift and expiration
	// (DrainAndReplace plans it), and a consolidation with a Replacement.
	Replace bool `json:"replace,omitempty"`
	// Replacement is a consolidation's one new node, exactly as launched
	// (nil: the nodes are deleted, their pods fit on the rest).
	Replacement      *Replacement `json:"replacement,omitempty"`
	SavingUSDPerHour float64      `json:"savingUsdPerHour,omitempty"`
	// USDPerHour is the cluster's node cost when deciding (after
	// NodeOverlays); ListUSDPerHour at list prices.
	USDPerHour     float64 `json:"usdPerHour"`
	ListUSDPerHour float64 `json:"listUsdPerHour,omitempty"`
	// Catalog: see ConsolidationStatus.Catalog.
	Catalog    string   `json:"catalog,omitempty"`
	Why        string   `json:"why"`
	Eligible   int      `json:"eligible"`
	Candidates []string `json:"candidates,omitempty"` // first few, in the order tried
	// Blocked says why nodes were not disrupted this pass (bounded); the
	// workflow keeps it as LastPass, not in History. Nil with
	// BlockedUnchanged: the same as DisruptionPass.Reported.
	Blocked          *BlockedReport `json:"blocked,omitempty"`
	BlockedUnchanged bool           `json:"blockedUnchanged,omitempty"`
}

// Validation is the re-simulation's verdict on a decision.
type Validation struct {
	Valid bool   `json:"valid"`
	Why   string `json:"why,omitempty"`
}

// DecisionRecord is a decision and what became of it.
type DecisionRecord struct {
	At       time.Time          `json:"at"`
	Decision DisruptionDecision `json:"decision"`
	Outcome  string             `json:"outcome"` // e.g. "done 2/2", "dropped: ...", "paused"
	// Replacements are the NodeClaims launched for it; Evicted counts the
	// pods it evicted (Consolidate sagas; DrainAndReplace children leave
	// both empty).
	Replacements []string `json:"replacements,omitempty"`
	Evicted      int      `json:"evicted,omitempty"`
}

// ConsolidationStatus is the status query's answer.
type ConsolidationStatus struct {
	ConsolidationState
	Phase string `json:"phase"` // waiting, deciding, validating, disrupting
}
