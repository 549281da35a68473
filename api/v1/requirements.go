package v1

import (
	"strconv"
)

// Requirement operators, as in corev1.NodeSelectorOperator.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
	OpGt           = "Gt"
	OpLt           = "Lt"
)

// Matches reports whether a node label satisfies the requirement, following
// Kubernetes node-affinity semantics: has says whether the label is present
// at all; NotIn and DoesNotExist match an absent label; Gt and Lt compare
// integers and never match an absent or non-integer value.
func (r NodeSelectorRequirementWithMinValues) Matches(value string, has bool) bool {
	switch r.Operator {
	case OpIn:
		return has && contains(r.Values, value)
	case OpNotIn:
		return !has || !contains(r.Values, value)
	case OpExists:
		return has
	case OpDoesNotExist:
		return !has
	case OpGt, OpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		v, err1 := strconv.ParseInt(value, 10, 64)
		bound, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == OpGt {
			return v > bound
		}
		return v < bound
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
