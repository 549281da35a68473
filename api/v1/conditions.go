package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition reasons Joinery writes on NodeClaims (Karpenter's where it has one).
const (
	ReasonLaunched              = "Launched"
	ReasonLaunchFailed          = "LaunchFailed"
	ReasonInsufficientCapacity  = "InsufficientCapacity"
	ReasonNodeNotFound          = "NodeNotFound"
	ReasonRegistered            = "Registered"
	ReasonNotLaunched           = "NotLaunched"
	ReasonNodeNotReady          = "NodeNotReady"
	ReasonStartupTaintsExist    = "StartupTaintsExist"
	ReasonEphemeralTaintsExist  = "KnownEphemeralTaintsExist"
	ReasonResourceNotRegistered = "ResourceNotRegistered"
	ReasonInitialized           = "Initialized"
	// ReasonUnauthorized: AWS refused a call the worker's IAM policy does
	// not allow (Karpenter's reason for the same).
	ReasonUnauthorized = "Unauthorized"
	// ReasonInstanceProfileNotPropagated: EC2 refused the launch because
	// the EC2NodeClass's instance profile (or its role) has not reached
	// it yet; the launch is retried (Launched=False meanwhile).
	ReasonInstanceProfileNotPropagated = "InstanceProfileNotPropagated"
)

// SetCondition returns conds with the condition of c.Type set to c's
// status, reason and message; the other conditions are kept in order. The
// transition time is now when the status changes (or the condition is new)
// and kept otherwise, as metav1.Condition requires. A missing reason is
// the status itself (the API server requires one). conds is not modified.
func SetCondition(conds []metav1.Condition, c metav1.Condition, now metav1.Time) []metav1.Condition {
	if c.Reason == "" {
		c.Reason = string(c.Status)
	}
	out := make([]metav1.Condition, 0, len(conds)+1)
	found := false
	for _, old := range conds {
		if old.Type != c.Type {
			out = append(out, old)
			continue
		}
		found = true
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status || c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		out = append(out, c)
	}
	if !found {
		c.LastTransitionTime = now
		out = append(out, c)
	}
	return out
}

// FindCondition returns the condition of that type (nil: none).
func FindCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// IsConditionTrue reports whether the condition of that type is True.
func IsConditionTrue(conds []metav1.Condition, typ string) bool {
	c := FindCondition(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// SameConditions: the two lists say the same, in the same order (type,
// status, reason, message, observed generation; transition times aside),
// so a status write would change nothing.
func SameConditions(have, want []metav1.Condition) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		h := have[i]
		if h.Type != want[i].Type || h.Status != want[i].Status || h.Reason != want[i].Reason || h.Message != want[i].Message ||
			h.ObservedGeneration != want[i].ObservedGeneration {
			return false
		}
	}
	return true
}
