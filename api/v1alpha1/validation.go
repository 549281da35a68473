package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The CRD's patterns (Karpenter's): an adjustment is a signed amount, a
// positive percentage, or a negative one of at most 100%.
var (
	PriceAdjustmentPattern = `^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`
	PricePattern           = `^\d+(\.\d+)?$`
	priceAdjustmentRE      = regexp.MustCompile(PriceAdjustmentPattern)
	priceRE                = regexp.MustCompile(PricePattern)
)

// MaxRequirements is Karpenter's limit on spec.requirements.
const MaxRequirements = 100

// Validate checks a NodeOverlay as Karpenter's CRD schema does (the CRD
// makes the same checks in the API server) and returns every problem with
// its field and reason.
func (o *NodeOverlay) Validate() field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if n := len(o.Spec.Requirements); n > MaxRequirements {
		errs = append(errs, field.TooMany(spec.Child("requirements"), n, MaxRequirements))
	}
	for i, r := range o.Spec.Requirements {
		errs = append(errs, validateRequirement(r, spec.Child("requirements").Index(i))...)
	}
	if o.Spec.Price != nil && o.Spec.PriceAdjustment != nil {
		errs = append(errs, field.Forbidden(spec, "cannot set both 'price' and 'priceAdjustment'"))
	}
	if p := o.Spec.PriceAdjustment; p != nil && !priceAdjustmentRE.MatchString(*p) {
		errs = append(errs, field.Invalid(spec.Child("priceAdjustment"), *p, "a signed amount (+0.05, -0.5) or percentage (+10%, -15%, at most -100%)"))
	}
	if p := o.Spec.Price; p != nil && !priceRE.MatchString(*p) {
		errs = append(errs, field.Invalid(spec.Child("price"), *p, "a non-negative decimal (USD/hour)"))
	}
	for name := range o.Spec.Capacity {
		switch name {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods:
			errs = append(errs, field.Forbidden(spec.Child("capacity").Key(string(name)), "invalid resource restricted: capacity adds extended resources only"))
		}
	}
	if w := o.Spec.Weight; w != nil && (*w < 1 || *w > 10000) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, "must be between 1 and 10000"))
	}
	return errs
}

func validateRequirement(r NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(r.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, msg))
	}
	switch r.Operator {
	case "In", "NotIn":
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), fmt.Sprintf("requirements with operator '%s' must have a value defined", r.Operator)))
		}
	case "Exists", "DoesNotExist":
		if len(r.Values) != 0 {
			errs = append(errs, field.Invalid(p.Child("values"), r.Values, fmt.Sprintf("operator %s takes no values", r.Operator)))
		}
	case "Gt", "Lt", "Gte", "Lte":
		if len(r.Values) != 1 {
			errs = append(errs, field.Invalid(p.Child("values"), r.Values, "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value"))
		} else if n, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil || n < 0 {
			errs = append(errs, field.Invalid(p.Child("values").Index(0), r.Values[0], "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator, []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"}))
	}
	return errs
}

// Matches reports whether a node with the label (has: whether it is set)
// meets the requirement, with api/v1's operators.
func (r NodeSelectorRequirement) Matches(value string, has bool) bool {
	return apiv1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values}.Matches(value, has)
}
