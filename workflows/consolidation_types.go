package workflows

import (
	"time"

	"github.com/joinery/joinery/api/saga"
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
	// USDPerHour is what Joinery's nodes cost at the last pass (after
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
	saga.BlockedReport
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

// DecisionRecord is a decision and what became of it.
type DecisionRecord struct {
	At       time.Time               `json:"at"`
	Decision saga.DisruptionDecision `json:"decision"`
	Outcome  string                  `json:"outcome"` // e.g. "done 2/2", "dropped: ...", "paused"
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
