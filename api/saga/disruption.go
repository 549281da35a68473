package saga

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// USDPerHour is what Joinery's nodes cost when deciding (after
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

// Disruption reasons (the <reason> in disrupt/<reason>/<node>).
const (
	ReasonManual       = "manual"
	ReasonEmpty        = "empty"
	ReasonUnderused    = "underutilized"
	ReasonDrifted      = "drifted"
	ReasonExpired      = "expired"
	ReasonInterruption = "interruption"
	// ReasonUnhealthy: a repair (Karpenter's reason label for it).
	ReasonUnhealthy = "unhealthy"
)

// Interruption kinds (the kind label of
// joinery_interruption_received_messages_total); providers/aws/interruption's
// Parse names them with these constants.
const (
	KindSpotInterrupted         = "spot_interrupted"
	KindRebalanceRecommendation = "rebalance_recommendation"
	KindScheduledChange         = "scheduled_change"
	KindInstanceStopped         = "instance_stopped"
	KindInstanceTerminated      = "instance_terminated"
	// KindCapacityReservationInterrupted: the owner of an interruptible
	// reservation takes an instance back in two minutes (Karpenter's
	// capacity_reservation_interrupted).
	KindCapacityReservationInterrupted = "capacity_reservation_interrupted"
	// KindCapacityBlockExpiring: a capacity block is within its
	// expiration period (Karpenter's 40 minutes) of its end; no event
	// says so, Joinery's capacity block watcher starts it.
	KindCapacityBlockExpiring = "capacity_block_expiring"
)
