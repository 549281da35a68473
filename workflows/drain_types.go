package workflows

import "time"

// The DrainAndReplace saga's names (it also runs ActivityTaintDisrupted
// and ActivityDrainStep).
const (
	DrainAndReplaceWorkflow = "DrainAndReplace"

	ActivityCheckCandidate     = "CheckDisruptionCandidate"
	ActivityPlanReplacement    = "PlanReplacement"
	ActivityWaitNodeClaimReady = "WaitNodeClaimReady"
	ActivityWaitNodeClaimGone  = "WaitNodeClaimGone"
)

// SignalNoticeEnd tells a running drain that its node goes away at a
// given time (a NoticeEnd): an interruption that finds the node's drain
// already under way hands it its deadline instead of starting another.
const SignalNoticeEnd = "notice-end"

// NoticeEnd is SignalNoticeEnd's payload.
type NoticeEnd struct {
	// Deadline is when the node goes away; the drain's deadline becomes
	// the earlier of this and its own.
	Deadline time.Time `json:"deadline"`
	// Kind is the interruption's kind (for the drain's log).
	Kind string `json:"kind,omitempty"`
}

// DisruptWorkflowID is the workflow id of a node's drain-and-replace. With
// payload encryption on, node is the node name's pseudonym
// (codec.Keyring.Pseudonym), so the id names no node in clear.
func DisruptWorkflowID(reason, node string) string { return "disrupt/" + reason + "/" + node }

// DisruptInput starts a DrainAndReplace saga for one node.
type DisruptInput struct {
	NodeName string `json:"nodeName"`
	Reason   string `json:"reason"`
	// Replace launches replacement capacity for the node's pods (as the
	// solver plans it) before the drain.
	Replace bool `json:"replace"`
	// Interruption: the node is going away whatever we do. Budgets and
	// do-not-disrupt do not apply, and the drain starts at once instead of
	// waiting for the replacements to be Ready.
	Interruption bool `json:"interruption,omitempty"`
	// SkipBudgets ignores NodePool disruption budgets (an operator's request).
	SkipBudgets bool `json:"skipBudgets,omitempty"`
	// Deadline, when set, is when the node goes away whatever we do (the
	// end of an interruption notice): the drain's deadline is the earlier
	// of it and the termination grace period's end.
	Deadline time.Time `json:"deadline,omitempty"`
	// Private (payload encryption on): no search attribute holds the node
	// name or instance id, and the replacements are Private too. The
	// starter of a private drain names it DisruptWorkflowID(reason,
	// pseudonym of the node).
	Private bool `json:"private,omitempty"`
}

// Candidate is the answer of the candidate re-check.
type Candidate struct {
	OK         bool   `json:"ok"`
	Why        string `json:"why,omitempty"`      // when not OK
	NodeName   string `json:"nodeName,omitempty"` // the node checked (set by CheckDisruptionCandidates)
	NodeClaim  string `json:"nodeClaim,omitempty"`
	NodePool   string `json:"nodePool,omitempty"`
	InstanceID string `json:"instanceId,omitempty"`
	// TerminationGracePeriod is the NodeClaim's spec.terminationGracePeriod
	// (0: none): after it, pods blocked by PDBs are deleted.
	TerminationGracePeriod time.Duration `json:"terminationGracePeriod,omitempty"`
}

// TaintRequest adds (or, with Remove, takes away) the karpenter.sh/disrupted
// taint and the NodeClaim's DisruptionReason condition.
type TaintRequest struct {
	NodeName  string `json:"nodeName"`
	NodeClaim string `json:"nodeClaim"`
	Reason    string `json:"reason"`
	Remove    bool   `json:"remove,omitempty"`
}

// DrainRequest asks for one pass of the drain.
type DrainRequest struct {
	NodeName string `json:"nodeName"`
	// Now is workflow time: deadlines are judged against it, not the wall clock.
	Now time.Time `json:"now"`
	// Deadline is when the NodeClaim's termination grace period ends (zero:
	// none); a pod still there at Deadline minus its own grace period is
	// deleted even if a PodDisruptionBudget blocks its eviction.
	Deadline time.Time `json:"deadline,omitempty"`
	// EvictDoNotDisrupt also evicts pods annotated karpenter.sh/do-not-disrupt.
	EvictDoNotDisrupt bool `json:"evictDoNotDisrupt,omitempty"`
}

// DrainStatus is what one drain pass did and what is left.
type DrainStatus struct {
	// Remaining pods the drain waits for (tier being drained and later tiers).
	Remaining int      `json:"remaining"`
	Tier      int      `json:"tier"` // 1..4, 0 when done
	Evicted   []string `json:"evicted,omitempty"`
	Blocked   []string `json:"blocked,omitempty"` // refused by a PodDisruptionBudget
	Deleted   []string `json:"deleted,omitempty"` // deleted at the grace-period deadline
	// NextForceDelete is the earliest moment a remaining pod is due for
	// deletion (Deadline minus its grace period); zero when none.
	NextForceDelete time.Time `json:"nextForceDelete,omitempty"`
}

// DisruptResult is how a DrainAndReplace saga ended.
type DisruptResult struct {
	Outcome      string   `json:"outcome"` // PhaseDone, PhaseSkipped or PhaseFailed
	Why          string   `json:"why,omitempty"`
	Replacements []string `json:"replacements,omitempty"`
	Evicted      int      `json:"evicted"`
	Deleted      int      `json:"deleted"`
}
