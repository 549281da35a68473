package v1

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationLimitUSDPerHour on a NodePool caps what its nodes cost, in
// USD per hour, as spec.limits caps their resources (a Joinery extension
// until Karpenter has a field: kubernetes-sigs/karpenter#1215). The value
// is a non-negative decimal ("250", "0.5").
const AnnotationLimitUSDPerHour = "joinery.sh/limit-usd-per-hour"

// usdPattern is a non-negative decimal: no sign, exponent, Inf or NaN.
var usdPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// CostLimit is the pool's USD/hour limit; ok is false when the pool has
// none or its value is invalid (Validate reports that).
func (np *NodePool) CostLimit() (usd float64, ok bool) {
	v, has := np.Annotations[AnnotationLimitUSDPerHour]
	if !has || !usdPattern.MatchString(v) {
		return 0, false
	}
	usd, err := strconv.ParseFloat(v, 64)
	return usd, err == nil
}

// validateCostLimit checks the annotation: a non-negative decimal, and
// not on a static pool (only limits.nodes applies there, as in Karpenter).
func (np *NodePool) validateCostLimit() field.ErrorList {
	v, has := np.Annotations[AnnotationLimitUSDPerHour]
	if !has {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(AnnotationLimitUSDPerHour)
	if np.IsStatic() {
		return field.ErrorList{field.Forbidden(p, "a USD/hour limit is not supported on static NodePools (only 'limits.nodes' is)")}
	}
	if _, ok := np.CostLimit(); !ok {
		return field.ErrorList{field.Invalid(p, v, "must be a non-negative decimal number of USD per hour, e.g. \"250\" or \"0.5\"")}
	}
	return nil
}
