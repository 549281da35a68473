// Package gang is the pure policy of all-or-nothing (gang) provisioning
// for ProvisioningRequests: which requests Joinery honours, the
// all-or-nothing check over a solver plan, the backoff between tries, the
// booking after success, and the status conditions each outcome sets
// (upstream's types and, where Cluster Autoscaler has them, its reasons).
// No I/O: the activities and the Gang workflow act on its answers.
package gang

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/api/provreq"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults.
const (
	// DefaultBooking is how long provisioned capacity is held for the
	// request's pods (Cluster Autoscaler: 10 minutes): the nodes are not
	// disrupted as empty meanwhile; then BookingExpired=True.
	DefaultBooking = 10 * time.Minute
	// DefaultDeadline is how long a try may take to get every node
	// Ready (registered and initialized) before it gives up and
	// terminates them all.
	DefaultDeadline = 10 * time.Minute
	// FirstBackoff and MaxBackoff bound the wait before the next try
	// (doubling from the first).
	FirstBackoff = 10 * time.Second
	MaxBackoff   = 5 * time.Minute
)

// Reasons on the conditions (and the pods' Events).
const (
	ReasonAccepted         = "Accepted"
	ReasonClassNotHonoured = "ProvisioningClassNotSupported"
	ReasonInvalid          = "InvalidProvisioningRequest"
	ReasonProvisioning     = "Provisioning"
	ReasonProvisioned      = "Provisioned"
	ReasonCapacityNotFound = "CapacityIsNotFound" // the plan leaves a pod unplaced
	ReasonInsufficient     = "InsufficientCapacity"
	ReasonDeadline         = "ProvisioningDeadlineExceeded"
	ReasonLaunchFailed     = "LaunchFailed"
	ReasonBookingExpired   = "BookingExpired"
	ReasonValidUntil       = "ValidUntilSecondsExceeded"
)

// ParamValidUntilSeconds is upstream's parameter of the atomic class:
// retry for at most that many seconds after the request's creation, then
// Failed=True.
const ParamValidUntilSeconds = "ValidUntilSeconds"

// ValidUntil is when a request stops being retried (zero: never); a
// value that is not a positive integer is an error naming the parameter.
func ValidUntil(p *provreq.ProvisioningRequest) (time.Time, error) {
	v, ok := p.Spec.Parameters[ParamValidUntilSeconds]
	if !ok {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, fmt.Errorf("spec.parameters.%s: %q is not a positive number of seconds", ParamValidUntilSeconds, v)
	}
	return p.CreationTimestamp.Add(time.Duration(n) * time.Second), nil
}

// Honoured says whether Joinery provisions requests of the class, and
// why not: check-capacity and other classes are reported, never ignored.
func Honoured(class string) (bool, string) {
	switch class {
	case provreq.ClassAtomic, provreq.ClassAtomicShort:
		return true, ""
	case provreq.ClassCheckCapacity:
		return false, fmt.Sprintf("provisioning class %s is not implemented by Joinery (only %s is)", class, provreq.ClassAtomic)
	default:
		return false, fmt.Sprintf("unknown provisioning class %q (Joinery honours %s)", class, provreq.ClassAtomic)
	}
}

// Done reports whether a request needs no further try: provisioned (booked
// or booking expired), failed for good, or revoked.
func Done(p *provreq.ProvisioningRequest) bool {
	return p.Is(provreq.Provisioned) || p.Is(provreq.Failed) || p.Is(provreq.BookingExpired) || p.Is(provreq.CapacityRevoked)
}

// Backoff is the wait after failed try number try (1-based): 10 s, 20 s,
// 40 s ... at most 5 minutes.
func Backoff(try int) time.Duration {
	d := FirstBackoff
	for i := 1; i < try && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Unplaced is a gang pod the plan found no place for.
type Unplaced struct {
	Pod    string
	Reason string
}

// Verdict is the all-or-nothing check of one plan.
type Verdict struct {
	OK bool
	// Reason (a condition reason) and Message say why not.
	Reason, Message string
}

// Check is all or nothing over a solver plan of a gang's pods: every one
// must be placed (on new nodes or on existing free capacity), or nothing
// is launched. pods is how many the gang has.
func Check(pods int, unplaced []Unplaced) Verdict {
	if pods == 0 {
		return Verdict{Reason: ReasonInvalid, Message: "the request has no pods"}
	}
	if len(unplaced) == 0 {
		return Verdict{OK: true}
	}
	sorted := append([]Unplaced(nil), unplaced...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Pod < sorted[j].Pod })
	// Group the pods by reason, so 32 identical pods make one line.
	byReason := map[string][]string{}
	var order []string
	for _, u := range sorted {
		if _, ok := byReason[u.Reason]; !ok {
			order = append(order, u.Reason)
		}
		byReason[u.Reason] = append(byReason[u.Reason], u.Pod)
	}
	var parts []string
	for _, r := range order {
		ps := byReason[r]
		name := ps[0]
		if len(ps) > 1 {
			name = fmt.Sprintf("%s and %d more", ps[0], len(ps)-1)
		}
		parts = append(parts, name+": "+r)
	}
	return Verdict{Reason: ReasonCapacityNotFound, Message: fmt.Sprintf("%d of %d pods fit nowhere, so no node is launched: %s",
		len(unplaced), pods, strings.Join(parts, "; "))}
}

// Set puts c into conds (by type): a condition whose status does not
// change keeps its lastTransitionTime. observed is the request's generation.
func Set(conds []metav1.Condition, t string, status metav1.ConditionStatus, reason, msg string, observed int64, now time.Time) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	c := metav1.Condition{Type: t, Status: status, Reason: reason, Message: truncate(msg, 32768), ObservedGeneration: observed,
		LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second))}
	for i := range out {
		if out[i].Type == t {
			if out[i].Status == status {
				c.LastTransitionTime = out[i].LastTransitionTime
			}
			out[i] = c
			return out
		}
	}
	return append(out, c)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Outcome is what a step of a try reports on the request.
type Outcome string

// Outcomes, in the order a try passes them.
const (
	OutcomeAccepted    Outcome = "accepted"
	OutcomeNotHonoured Outcome = "not-honoured"
	OutcomeInvalid     Outcome = "invalid"
	OutcomeLaunching   Outcome = "launching"
	OutcomeUnplaced    Outcome = "unplaced"
	OutcomeFailed      Outcome = "failed"
	OutcomeProvisioned Outcome = "provisioned"
	OutcomeExpired     Outcome = "booking-expired"
	OutcomeGaveUp      Outcome = "gave-up"
)

// Conditions are the request's conditions after an outcome (reason and
// message from the step).
func Conditions(conds []metav1.Condition, o Outcome, reason, msg string, gen int64, now time.Time) []metav1.Condition {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	switch o {
	case OutcomeNotHonoured, OutcomeInvalid:
		return Set(conds, provreq.Accepted, F, reason, msg, gen, now)
	case OutcomeAccepted:
		return Set(conds, provreq.Accepted, T, ReasonAccepted, "Joinery provisions the request all or nothing", gen, now)
	case OutcomeLaunching:
		conds = Set(conds, provreq.Accepted, T, ReasonAccepted, "Joinery provisions the request all or nothing", gen, now)
		return Set(conds, provreq.Provisioned, F, ReasonProvisioning, msg, gen, now)
	case OutcomeUnplaced, OutcomeFailed:
		return Set(conds, provreq.Provisioned, F, reason, msg, gen, now)
	case OutcomeProvisioned:
		return Set(conds, provreq.Provisioned, T, ReasonProvisioned, msg, gen, now)
	case OutcomeExpired:
		return Set(conds, provreq.BookingExpired, T, ReasonBookingExpired, msg, gen, now)
	case OutcomeGaveUp:
		return Set(conds, provreq.Failed, T, reason, msg, gen, now)
	}
	return conds
}
