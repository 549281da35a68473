package v1

import (
	"cmp"
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

	// OpGte and OpLte are Karpenter's (v1.9+) inclusive bounds, allowed in
	// NodePool and NodeClaim requirements, not in a pod's node affinity.
	OpGte = "Gte"
	OpLte = "Lte"
)

// Matches reports whether a node label satisfies the requirement, following
// Kubernetes node-affinity semantics: has says whether the label is present
// at all; NotIn and DoesNotExist match an absent label; Gt, Lt, Gte and Lte
// compare integers and never match an absent or non-integer value.
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
	case OpGt, OpLt, OpGte, OpLte:
		c, ok := CompareIntLabel(value, has, r.Values)
		switch r.Operator {
		case OpGt:
			return ok && c > 0
		case OpLt:
			return ok && c < 0
		case OpGte:
			return ok && c >= 0
		}
		return ok && c <= 0
	}
	return false
}

// CompareIntLabel compares a label's value with the single bound of an
// integer operator (Gt, Lt, Gte, Lte) as cmp.Compare does;
// ok is false, and such a requirement never matches, when the label is
// absent, there is not exactly one bound, or either is not an integer.
func CompareIntLabel(value string, has bool, bound []string) (c int, ok bool) {
	if !has || len(bound) != 1 {
		return 0, false
	}
	v, err1 := strconv.ParseInt(value, 10, 64)
	b, err2 := strconv.ParseInt(bound[0], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return cmp.Compare(v, b), true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
