package workflows

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

// MaxOfferingsPerNodeClaim bounds the offerings a NodeClaim saga carries in
// its history (cheapest first): enough to fall back through several types
// and zones on insufficient capacity, small enough for big batches.
const MaxOfferingsPerNodeClaim = 20

// Replacement is the one node a consolidation decision launches, as its
// simulation found it and the strictly-cheaper rule cut it: the
// Consolidate saga creates exactly this NodeClaim, and the validation and
// the re-check before acting hold the fresh simulation to it.
type Replacement struct {
	NodePool string `json:"nodePool"`
	// InstanceTypes it may launch as, cheapest first: only types whose
	// worst-case launch price is below what the candidates cost (the
	// NodeClaim's instance-type requirement).
	InstanceTypes []string `json:"instanceTypes"`
	// Offerings the NodeClaim saga tries, cheapest first (at most
	// MaxOfferingsPerNodeClaim); spot only when CapacityType is pinned.
	Offerings []Offering `json:"offerings"`
	// Requirements are the simulation's (the pool's narrowed by the pods),
	// without the instance type, with the capacity type pinned when the
	// decision pins it.
	Requirements []Requirement `json:"requirements,omitempty"`
	// Requests are the pods' summed requests plus daemonset overhead
	// (resource name -> quantity), the NodeClaim's spec.resources.requests.
	Requests map[string]string `json:"requests,omitempty"`
	// Pods is how many pods the simulation moves onto it.
	Pods int `json:"pods"`
	// USDPerHour is its cheapest offering's price; MaxUSDPerHour the
	// worst-case launch price of its dearest type, strictly below the
	// candidates' summed price.
	USDPerHour    float64 `json:"usdPerHour"`
	MaxUSDPerHour float64 `json:"maxUsdPerHour"`
}

// Requirement is a NodeClaim requirement (karpenter.sh/v1
// NodeSelectorRequirementWithMinValues).
type Requirement struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

// ConsolidateInput starts a Consolidate saga for one validated decision.
type ConsolidateInput struct {
	Decision DisruptionDecision `json:"decision"`
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
	Replacement Replacement `json:"replacement"`
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
