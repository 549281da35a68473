package workflows

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/joinery/joinery/api/saga"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The Gang workflow's names.
const (
	GangWorkflow = "Gang"

	ActivityPlanGang      = "PlanGang"
	ActivityWaitGangReady = "WaitGangReady"
	ActivitySetGangStatus = "SetGangStatus"
	ActivityBookGang      = "BookGang"

	ActivityDeleteGangPlacementGroup = "DeleteGangPlacementGroup"
	// versionGangPlacementGroup: a failed try deletes its cluster
	// placement group (only a try that has one records the marker).
	versionGangPlacementGroup = "gang-placement-group"
)

// Gang phases (the Phase search attribute and the status query).
const (
	PhaseLaunchingAll = "LaunchingAll"
	PhaseCompensating = "Compensating"
	PhaseBackingOff   = "BackingOff"
	PhaseBooked       = "Booked"
)

// Gang outcomes (GangStatusUpdate.Outcome; gang.Outcome's values).
const (
	GangAccepted    = "accepted"
	GangLaunching   = "launching"
	GangUnplaced    = "unplaced"
	GangFailed      = "failed"
	GangProvisioned = "provisioned"
	GangExpired     = "booking-expired"
)

// GangWorkflowID is the workflow id of one try of a ProvisioningRequest:
// gang/<namespace>/<name>/<uid>/<try>, with the first 8 characters of the
// request's UID, so a request deleted and created again under its name
// starts from try 1 (ids are never reused).
func GangWorkflowID(namespace, name, uid string, try int) string {
	return "gang/" + namespace + "/" + name + "/" + uid[:min(8, len(uid))] + "/" + strconv.Itoa(try)
}

// GangInput starts one try of a ProvisioningRequest.
type GangInput struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Try       int    `json:"try"`
	// Deadline: every node Ready within it, or all are terminated.
	Deadline time.Duration `json:"deadline"`
	// Booking: how long the nodes are held for the request's pods.
	Booking time.Duration `json:"booking"`
	// Backoff is the wait before the next try, by try (index try-1; the
	// last entry repeats).
	Backoff []time.Duration `json:"backoff"`
}

// GangPlan is the plan activity's answer.
type GangPlan struct {
	// Done: nothing to do (the request is gone, replaced, provisioned or
	// not honoured; the activity reported it).
	Done bool `json:"done,omitempty"`
	Pods int  `json:"pods"`
	// OK: every pod is placed; NodeClaims are the new nodes (written).
	OK         bool             `json:"ok"`
	Reason     string           `json:"reason,omitempty"`
	Message    string           `json:"message,omitempty"`
	NodeClaims []NodeClaimInput `json:"nodeClaims,omitempty"`
	OnExisting int              `json:"onExisting"`
	// PlacementGroup is the cluster placement group the try created for
	// the gang (the request's joinery.sh/placement), every NodeClaim
	// launched into it; the try deletes it if it fails.
	PlacementGroup string `json:"placementGroup,omitempty"`
}

// GangWait asks for every NodeClaim to be initialized.
type GangWait struct {
	NodeClaims []string `json:"nodeClaims"`
}

// GangStatusUpdate sets the request's conditions and details and records
// Events on it and its consuming pods.
type GangStatusUpdate struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	UID       string   `json:"uid"`
	Try       int      `json:"try"`
	Outcome   string   `json:"outcome"`
	Reason    string   `json:"reason,omitempty"`
	Message   string   `json:"message"`
	NextTry   string   `json:"nextTry,omitempty"` // RFC 3339
	Nodes     []string `json:"nodes,omitempty"`
	// Offerings that had no capacity ("type/zone/capacity-type").
	Offerings []string `json:"offerings,omitempty"`
}

// GangBooking marks the NodeClaims booked until Until (RFC 3339).
type GangBooking struct {
	NodeClaims []string `json:"nodeClaims"`
	Until      string   `json:"until"`
}

// GangStatus is the answer of the status query.
type GangStatus struct {
	Phase      string   `json:"phase"`
	Try        int      `json:"try"`
	NodeClaims []string `json:"nodeClaims,omitempty"`
	Ready      bool     `json:"ready"`
	Failure    string   `json:"failure,omitempty"`
	Offerings  []string `json:"offerings,omitempty"`
	NextTry    string   `json:"nextTry,omitempty"`
}

// GangResult summarises a try.
type GangResult struct {
	Provisioned bool     `json:"provisioned"`
	NodeClaims  []string `json:"nodeClaims,omitempty"`
	Failure     string   `json:"failure,omitempty"`
	NextTry     string   `json:"nextTry,omitempty"` // the next try's workflow id
}

// Gang is one all-or-nothing try of a ProvisioningRequest: plan every pod
// of the request in one solve (a plan that leaves any pod unplaced
// launches nothing), start one NodeClaim saga per new node (its
// children), and wait for every node to be Ready within the deadline.
// Compensation: a launch that fails (insufficient capacity in every
// offering it may use), a node lost, or the deadline deletes every
// NodeClaim of the try, whose sagas terminate the instances, and waits
// until they have; the request says why (Provisioned=False), and the next
// try starts after a backoff as its own workflow (gang/<ns>/<name>/<try+1>),
// its offerings steered off the ones that failed by the ICE cache. On
// success: Provisioned=True, the nodes are booked (not disrupted, their
// capacity not planned for other pods) for the booking, then
// BookingExpired=True.
func Gang(ctx workflow.Context, in GangInput) (GangResult, error) {
	st := GangStatus{Phase: PhasePlanning, Try: in.Try}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (GangStatus, error) { return st, nil }); err != nil {
		return GangResult{}, err
	}
	phase := nodePhase(ctx, &st.Phase)
	phase.Set(PhasePlanning)
	short := workflow.WithActivityOptions(ctx, shortCall())
	status := func(u GangStatusUpdate) {
		u.Namespace, u.Name, u.UID, u.Try = in.Namespace, in.Name, in.UID, in.Try
		logFailure(ctx, "gang status "+u.Outcome, workflow.ExecuteActivity(short, ActivitySetGangStatus, u).Get(ctx, nil))
	}
	var res GangResult
	var plan GangPlan
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, planCall(5)), ActivityPlanGang, in).Get(ctx, &plan); err != nil {
		return res, fmt.Errorf("plan: %w", err)
	}
	if plan.Done {
		phase.Set(PhaseDone)
		return res, nil
	}
	if !plan.OK {
		st.Failure = plan.Message
		return retry(ctx, in, &st, phase, status, GangStatusUpdate{Outcome: GangUnplaced, Reason: plan.Reason, Message: plan.Message})
	}
	for _, nc := range plan.NodeClaims {
		st.NodeClaims = append(st.NodeClaims, nc.Name)
	}
	res.NodeClaims = st.NodeClaims
	phase.Set(PhaseLaunchingAll)
	status(GangStatusUpdate{Outcome: GangLaunching, Message: fmt.Sprintf("try %d: launching %d node(s) for %d pod(s) (%d on existing nodes)",
		in.Try, len(plan.NodeClaims), plan.Pods, plan.OnExisting), Nodes: st.NodeClaims})

	wctx, cancelWait := workflow.WithCancel(ctx)
	t := &gangTry{plan: plan}
	t.launch(ctx)
	ready := t.waitReady(ctx, wctx, in.Deadline, st.NodeClaims)
	cancelWait()
	if ready {
		return book(ctx, short, in, &st, phase, status, plan.Pods, res)
	}

	// Compensation: every NodeClaim of the try goes; their sagas
	// terminate the instances. Wait until each saga has ended.
	phase.Set(PhaseCompensating)
	launched := t.compensate(ctx, short)
	dropPlacementGroup(ctx, plan.PlacementGroup)
	st.Failure = t.failure.detail
	st.Offerings = t.failure.offerings
	return retry(ctx, in, &st, phase, status, GangStatusUpdate{Outcome: GangFailed, Reason: t.failure.reason,
		Message: t.failure.message(in.Try, len(plan.NodeClaims), launched), Offerings: t.failure.offerings, Nodes: st.NodeClaims})
}

// gangTry is one try's nodes while they launch: their sagas (children),
// which of them have ended, and the try's first failure.
type gangTry struct {
	plan     GangPlan
	sel      workflow.Selector
	children []workflow.ChildWorkflowFuture
	ended    []bool
	failure  *gangFailure
}

// launch starts the children: each node's own saga, which outlives this
// try. The first that ends or fails sets the try's failure (through sel);
// one that does not start fails the try at once.
func (t *gangTry) launch(ctx workflow.Context) {
	t.sel = workflow.NewSelector(ctx)
	t.children = make([]workflow.ChildWorkflowFuture, len(t.plan.NodeClaims))
	t.ended = make([]bool, len(t.plan.NodeClaims))
	for i, nc := range t.plan.NodeClaims {
		t.children[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, nodeClaimChild(nc)), NodeClaimWorkflow, nc)
		t.sel.AddFuture(t.children[i], func(f workflow.Future) {
			t.ended[i] = true
			if t.failure != nil {
				return
			}
			var cst NodeClaimStatus
			err := f.Get(ctx, &cst)
			t.failure = childFailure(nc.Name, cst, err)
		})
	}
	for i, c := range t.children {
		if err := c.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			// Not started: nothing launched for it; compensate the rest.
			t.ended[i] = true
			if t.failure == nil {
				t.failure = &gangFailure{reason: "LaunchFailed", detail: fmt.Sprintf("start nodeclaim %s: %v", t.plan.NodeClaims[i].Name, err)}
			}
		}
	}
}

// waitReady waits, in wctx, until every node is Ready (true) or the try
// fails: a saga ends, or the deadline (0: 10 min) passes.
func (t *gangTry) waitReady(ctx, wctx workflow.Context, deadline time.Duration, nodeClaims []string) bool {
	if deadline <= 0 {
		deadline = 10 * time.Minute
	}
	ready := false
	if t.failure == nil {
		waitOpts := untilReady(deadline)
		waitOpts.ScheduleToCloseTimeout = deadline
		t.sel.AddFuture(workflow.ExecuteActivity(workflow.WithActivityOptions(wctx, waitOpts), ActivityWaitGangReady, GangWait{NodeClaims: nodeClaims}),
			func(f workflow.Future) {
				err := f.Get(ctx, nil)
				switch {
				case err == nil:
					ready = true
				case t.failure == nil:
					// A saga that fails or ends ends the try through its
					// future; this is the deadline.
					t.failure = &gangFailure{reason: "ProvisioningDeadlineExceeded", detail: fmt.Sprintf("not every node Ready within the deadline %s", deadline)}
				}
			})
		for !ready && t.failure == nil {
			t.sel.Select(ctx)
		}
	}
	return ready
}

// book holds the try's Ready nodes for the request's pods for the
// booking (0: 10 min), then ends the try.
func book(ctx, short workflow.Context, in GangInput, st *GangStatus, phase *phaseTracker, status func(GangStatusUpdate), pods int, res GangResult) (GangResult, error) {
	st.Ready = true
	phase.Set(PhaseBooked)
	booking := in.Booking
	if booking <= 0 {
		booking = 10 * time.Minute
	}
	until := workflow.Now(ctx).Add(booking).UTC().Format(time.RFC3339)
	logFailure(ctx, "booking the gang's nodes", workflow.ExecuteActivity(short, ActivityBookGang, GangBooking{NodeClaims: st.NodeClaims, Until: until}).Get(ctx, nil))
	status(GangStatusUpdate{Outcome: GangProvisioned, Message: fmt.Sprintf("try %d: all %d node(s) Ready for %d pod(s); booked until %s",
		in.Try, len(st.NodeClaims), pods, until), Nodes: st.NodeClaims, NextTry: until})
	res.Provisioned = true
	if err := workflow.Sleep(ctx, booking); err != nil {
		return res, err
	}
	status(GangStatusUpdate{Outcome: GangExpired, Message: fmt.Sprintf("the booking of %s ended", booking), Nodes: st.NodeClaims})
	phase.Set(PhaseDone)
	return res, nil
}

// compensate deletes every NodeClaim of the failed try and waits, at most
// compensationWait, for the sagas still running to end; it returns how
// many of those had launched an instance, and notes the ones still
// running in the failure's detail.
func (t *gangTry) compensate(ctx, short workflow.Context) (launched int) {
	for _, nc := range t.plan.NodeClaims {
		logFailure(ctx, "compensation: deleting a gang NodeClaim",
			workflow.ExecuteActivity(short, ActivityDeleteNodeClaim, TerminateRequest{NodeClaim: nc.Name, Reason: "gang try failed: " + t.failure.reason}).Get(ctx, nil),
			"nodeclaim", nc.Name)
	}
	// Bounded: a saga that never ends must not keep the request from
	// its next try (the garbage collector still finds its instance).
	tctx, cancelTimer := workflow.WithCancel(ctx)
	csel := workflow.NewSelector(ctx)
	waiting, timedOut := 0, false
	for i, c := range t.children {
		if t.ended[i] {
			continue
		}
		waiting++
		csel.AddFuture(c, func(f workflow.Future) {
			var cst NodeClaimStatus
			_ = f.Get(ctx, &cst)
			if cst.Instance.ID != "" {
				launched++
			}
			waiting--
		})
	}
	csel.AddFuture(workflow.NewTimer(tctx, compensationWait), func(workflow.Future) { timedOut = true })
	for waiting > 0 && !timedOut {
		csel.Select(ctx)
	}
	cancelTimer()
	if waiting > 0 {
		t.failure.detail += fmt.Sprintf("; %d NodeClaim saga(s) still terminating after %s", waiting, compensationWait)
	}
	return launched
}

// dropPlacementGroup deletes a failed try's cluster placement group after
// its nodes' sagas have ended. EC2 refuses while an instance is still in
// it: retried for about five minutes, then left to the garbage collector.
func dropPlacementGroup(ctx workflow.Context, name string) {
	if name == "" || workflow.GetVersion(ctx, versionGangPlacementGroup, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	opts := shortCall()
	opts.RetryPolicy.MaximumAttempts = 12
	logFailure(ctx, "compensation: deleting the try's placement group",
		workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityDeleteGangPlacementGroup, name).Get(ctx, nil), "placementGroup", name)
}

// compensationWait bounds the wait for a failed try's NodeClaim sagas to
// end (their terminations: no pods to drain, the instance gone).
const compensationWait = 15 * time.Minute

// retry records a failed try on the request, waits out the backoff and
// starts the next try (its own workflow, outliving this one).
func retry(ctx workflow.Context, in GangInput, st *GangStatus, phase *phaseTracker, status func(GangStatusUpdate), u GangStatusUpdate) (GangResult, error) {
	wait := gangBackoff(in)
	next := workflow.Now(ctx).Add(wait).UTC().Format(time.RFC3339)
	st.NextTry = next
	u.NextTry = next
	u.Message += fmt.Sprintf("; try %d at %s", in.Try+1, next)
	status(u)
	phase.Set(PhaseBackingOff)
	if err := workflow.Sleep(ctx, wait); err != nil {
		return GangResult{Failure: u.Message}, err
	}
	nin := in
	nin.Try++
	id := GangWorkflowID(in.Namespace, in.Name, in.UID, nin.Try)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: id, TaskQueue: TaskQueue, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(SAPhase.ValueSet(PhasePlanning)),
	})
	err := workflow.ExecuteChildWorkflow(cctx, GangWorkflow, nin).GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if err != nil && !errors.As(err, &started) {
		return GangResult{Failure: u.Message}, fmt.Errorf("start %s: %w", id, err)
	}
	phase.Set(PhaseDone)
	return GangResult{Failure: u.Message, NextTry: id}, nil
}

func gangBackoff(in GangInput) time.Duration {
	if len(in.Backoff) == 0 {
		return 10 * time.Second
	}
	i := min(in.Try-1, len(in.Backoff)-1)
	return in.Backoff[max(i, 0)]
}

// gangFailure is why a try gave up.
type gangFailure struct {
	reason    string // a gang.Reason*
	detail    string
	offerings []string
}

func (f *gangFailure) message(try, nodes, launched int) string {
	msg := fmt.Sprintf("try %d: ", try)
	if len(f.offerings) > 0 {
		msg += "insufficient capacity in " + describeList(f.offerings, 5) + "; "
	}
	return msg + fmt.Sprintf("%s; all %d node(s) of the try deleted (%d had an instance, terminated)", f.detail, nodes, launched)
}

func describeList(s []string, n int) string {
	out := ""
	for i, v := range s {
		if i == n {
			return out + fmt.Sprintf(", +%d more", len(s)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// childFailure is the failure of a NodeClaim saga that ended before the
// gang was Ready: the offerings that had no capacity when it says so.
func childFailure(name string, st NodeClaimStatus, err error) *gangFailure {
	f := &gangFailure{reason: "LaunchFailed", detail: fmt.Sprintf("nodeclaim %s ended before Ready", name)}
	if st.Failure != "" {
		f.detail += ": " + st.Failure
	}
	if err == nil {
		return f
	}
	// The saga's own message (its NodeClaimFailed error), short.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if app, ok := e.(*temporal.ApplicationError); ok {
			f.detail = fmt.Sprintf("nodeclaim %s: %s", name, clip(app.Message(), 200))
			break
		}
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		app, ok := e.(*temporal.ApplicationError)
		if !ok || app.Type() != ErrInsufficientCapacity {
			continue
		}
		f.reason = "InsufficientCapacity"
		var offs []saga.Offering
		if app.HasDetails() && app.Details(&offs) == nil {
			for _, o := range offs {
				f.offerings = append(f.offerings, o.InstanceType+"/"+o.Zone+"/"+o.CapacityType)
			}
		}
		f.detail = fmt.Sprintf("nodeclaim %s found no capacity in any offering it tried", name)
		break
	}
	return f
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
