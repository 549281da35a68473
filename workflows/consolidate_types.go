package workflows

import "github.com/joinery/joinery/api/saga"

// The Consolidate saga's names (it also runs ActivityTaintDisrupted,
// ActivityDrainStep, ActivityWaitNodeClaimReady, ActivityWaitNodeClaimGone
// and ActivityRecordEvent).
const (
	ConsolidateWorkflow = "Consolidate"

	ActivityCheckCandidates      = "CheckDisruptionCandidates"
	ActivityRecheckConsolidation = "RecheckConsolidation"
	ActivityCreateReplacement    = "CreateReplacement"
)

// VersionConsolidationSaga gates the Consolidation loop's change from one
// DrainAndReplace child per node (each planning its own replacement) to
// one Consolidate child per emptiness or consolidation decision.
const VersionConsolidationSaga = "consolidation-saga"

// ConsolidateInput starts a Consolidate saga for one validated decision.
type ConsolidateInput struct {
	Decision saga.DisruptionDecision `json:"decision"`
	// Private (payload encryption on): no search attribute holds a node
	// name or instance id, the replacement is Private too, and the saga is
	// named after Decision.NodeRefs[0].
	Private bool `json:"private,omitempty"`
}

// CandidatesRequest re-checks a decision's nodes together, right before
// acting.
type CandidatesRequest struct {
	Nodes  []string `json:"nodes"`
	Reason string   `json:"reason"`
	// Partial (emptiness, as Karpenter): the nodes that still may go go,
	// the others are dropped. Otherwise one that may not go stops them all.
	Partial bool `json:"partial,omitempty"`
}

// CandidateSet answers a CandidatesRequest: one Candidate per node, in the
// request's order (OK false, with Why, for a node that may not go); Why is
// set when the set as a whole may not go.
type CandidateSet struct {
	Candidates []Candidate `json:"candidates"`
	Why        string      `json:"why,omitempty"`
}

// OK returns the candidates that may go.
func (s CandidateSet) OK() []Candidate {
	var out []Candidate
	for _, c := range s.Candidates {
		if c.OK {
			out = append(out, c)
		}
	}
	return out
}

// ReplacementRequest asks for the NodeClaim object of a decision's replacement.
type ReplacementRequest struct {
	Replacement saga.Replacement `json:"replacement"`
	// For names the nodes it replaces (for the log and the Event).
	For     []string `json:"for,omitempty"`
	Private bool     `json:"private,omitempty"`
}

// ConsolidateResult is how a Consolidate saga ended.
type ConsolidateResult struct {
	Outcome string `json:"outcome"` // PhaseDone, PhaseSkipped or PhaseFailed
	Why     string `json:"why,omitempty"`
	// Nodes are the nodes it removed (Outcome PhaseDone).
	Nodes []string `json:"nodes,omitempty"`
	// Replacement is the NodeClaim it launched ("": none).
	Replacement string `json:"replacement,omitempty"`
	Evicted     int    `json:"evicted"`
	Deleted     int    `json:"deleted"`
}
