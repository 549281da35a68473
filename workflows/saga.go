package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Phases of the singleton loops (Consolidation, GarbageCollection): in
// their status query only, not a search attribute.
const (
	PhaseWaiting    = "waiting"
	PhaseDeciding   = "deciding"
	PhaseValidating = "validating"
	PhaseDisrupting = "disrupting"
	PhasePlanning   = "planning"
	PhaseCollecting = "collecting"
	PhaseContinuing = "continuing"
)

// phaseTracker is where a workflow keeps its phase: Set stores it (for the
// status query) and, for a workflow that touches a node, upserts the Phase
// search attribute with any extra attributes in the same command.
type phaseTracker struct {
	ctx        workflow.Context
	phase      *string
	searchable bool
}

// nodePhase tracks the phase of a workflow that touches a node in *phase
// (the workflow answers the status query itself).
func nodePhase(ctx workflow.Context, phase *string) *phaseTracker {
	return &phaseTracker{ctx: ctx, phase: phase, searchable: true}
}

// loopPhase tracks a singleton loop's phase in *phase: status query only,
// no search attribute (the loops' histories have no upserts).
func loopPhase(ctx workflow.Context, phase *string) *phaseTracker {
	return &phaseTracker{ctx: ctx, phase: phase}
}

// trackPhase tracks a node workflow's phase, starting at initial, and
// answers the status query with it.
func trackPhase(ctx workflow.Context, initial string) (*phaseTracker, error) {
	phase := initial
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (string, error) { return phase, nil }); err != nil {
		return nil, err
	}
	return nodePhase(ctx, &phase), nil
}

// Set moves to phase p (with extra search attributes, for a node workflow).
func (t *phaseTracker) Set(p string, extra ...temporal.SearchAttributeUpdate) {
	*t.phase = p
	if t.searchable {
		upsert(t.ctx, append([]temporal.SearchAttributeUpdate{SAPhase.ValueSet(p)}, extra...)...)
	}
}

// Get is the current phase.
func (t *phaseTracker) Get() string { return *t.phase }

// upsert upserts search attributes, logging a failure (the SDK refuses
// only malformed updates; the workflow goes on).
func upsert(ctx workflow.Context, u ...temporal.SearchAttributeUpdate) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, u...); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not upserted", "error", err)
	}
}

// logFailure logs a best-effort step that failed (an Event, a
// compensation, a courtesy signal): the saga goes on without it.
func logFailure(ctx workflow.Context, step string, err error, kv ...interface{}) {
	if err != nil {
		workflow.GetLogger(ctx).Warn(step+" failed", append([]interface{}{"error", err}, kv...)...)
	}
}

// Event types of RecordEvent (Kubernetes Event types).
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)

// nodeEvents returns a saga's Event recorder: RecordEvent on the object
// named in base (a Node or a NodeClaim), best effort.
func nodeEvents(ctx, actx workflow.Context, base EventRequest) func(typ, reason, msg string) {
	return func(typ, reason, msg string) {
		r := base
		r.Type, r.Reason, r.Message = typ, reason, msg
		logFailure(ctx, "recording Event "+reason, workflow.ExecuteActivity(actx, ActivityRecordEvent, r).Get(ctx, nil))
	}
}
