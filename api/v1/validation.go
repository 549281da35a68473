package v1

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a NodePool the way Karpenter's CRD validation and webhook
// do, and returns every problem with its field path and reason (nil when
// valid). Errors are field.ErrorList; ToAggregate() gives one error.
//
// The NodePool CRD in deploy/crds makes the same checks in the API server
// (patterns from patterns.go, CEL rules); testdata/invalid-nodepools.yaml is
// the table both must refuse, and testdata/valid.yaml what both must accept.
// Validate still runs on what the controller reads: objects stored before
// the schema, or in a cluster with an older CRD, are reported and skipped.
func (np *NodePool) Validate() field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	tpl := spec.Child("template", "spec")
	errs = append(errs, validateNodeClassRef(np.Spec.Template.Spec.NodeClassRef, tpl.Child("nodeClassRef"))...)
	if n := len(np.Spec.Template.Spec.Requirements); n > MaxRequirements {
		errs = append(errs, field.TooMany(tpl.Child("requirements"), n, MaxRequirements))
	}
	for i, r := range np.Spec.Template.Spec.Requirements {
		errs = append(errs, ValidateRequirement(r, tpl.Child("requirements").Index(i))...)
	}
	errs = append(errs, validateTemplateLabels(np.Spec.Template.ObjectMeta.Labels, spec.Child("template", "metadata", "labels"))...)
	if n := len(np.Spec.Template.Spec.Taints); n > MaxTaints {
		errs = append(errs, field.TooMany(tpl.Child("taints"), n, MaxTaints))
	}
	if n := len(np.Spec.Template.Spec.StartupTaints); n > MaxTaints {
		errs = append(errs, field.TooMany(tpl.Child("startupTaints"), n, MaxTaints))
	}
	for i, t := range np.Spec.Template.Spec.Taints {
		errs = append(errs, validateTaint(t, tpl.Child("taints").Index(i))...)
	}
	for i, t := range np.Spec.Template.Spec.StartupTaints {
		errs = append(errs, validateTaint(t, tpl.Child("startupTaints").Index(i))...)
	}
	if e := np.Spec.Template.Spec.ExpireAfter; e != "" {
		if _, err := ParseNillableDuration(e); err != nil {
			errs = append(errs, field.Invalid(tpl.Child("expireAfter"), e, err.Error()))
		}
	}
	if g := np.Spec.Template.Spec.TerminationGracePeriod; g != nil && g.Duration < 0 {
		errs = append(errs, field.Invalid(tpl.Child("terminationGracePeriod"), g.Duration.String(), "must not be negative"))
	}
	errs = append(errs, validateDisruption(np.Spec.Disruption, spec.Child("disruption"))...)
	errs = append(errs, np.validateCostLimit()...)
	if r := np.Spec.Replicas; r != nil {
		if *r < 0 {
			errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must not be negative"))
		}
		if np.Spec.Weight != nil {
			errs = append(errs, field.Forbidden(spec.Child("weight"), "'weight' is not supported on static NodePools"))
		}
		for name := range np.Spec.Limits {
			if name != "nodes" {
				errs = append(errs, field.Forbidden(spec.Child("limits").Key(string(name)), "only 'limits.nodes' is supported on static NodePools"))
			}
		}
	}
	if w := np.Spec.Weight; w != nil && (*w < 1 || *w > 100) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, "must be between 1 and 100"))
	}
	for name, q := range np.Spec.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(spec.Child("limits").Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// validateNodeClassRef checks that the template names an EC2NodeClass.
func validateNodeClassRef(ref *NodeClassReference, rp *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(rp, "a NodePool must name its EC2NodeClass")}
	}
	var errs field.ErrorList
	switch {
	case ref.Name == "":
		errs = append(errs, field.Required(rp.Child("name"), ""))
	case len(ref.Name) > MaxNameLength:
		errs = append(errs, field.TooLong(rp.Child("name"), ref.Name, MaxNameLength))
	}
	if ref.Kind != "EC2NodeClass" {
		errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, []string{"EC2NodeClass"}))
	}
	if ref.Group != "karpenter.k8s.aws" {
		errs = append(errs, field.NotSupported(rp.Child("group"), ref.Group, []string{"karpenter.k8s.aws"}))
	}
	return errs
}

// validateTemplateLabels checks the template's labels: how many, none
// that Joinery sets itself, valid keys and values.
func validateTemplateLabels(labels map[string]string, lp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(labels); n > MaxLabels {
		errs = append(errs, field.TooMany(lp, n, MaxLabels))
	}
	for k, v := range labels {
		p := lp.Key(k)
		if RestrictedLabels[k] {
			errs = append(errs, field.Forbidden(p, "label is set by Joinery and may not be in a template"))
		}
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	}
	return errs
}

// validateDisruption checks spec.disruption: the policy, consolidateAfter
// and the budgets.
func validateDisruption(d Disruption, dp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch d.ConsolidationPolicy {
	case "", ConsolidationPolicyWhenEmpty, ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidationPolicyBalanced:
	default:
		errs = append(errs, field.NotSupported(dp.Child("consolidationPolicy"), d.ConsolidationPolicy, ConsolidationPolicies))
	}
	if d.ConsolidateAfter != "" {
		if _, err := ParseNillableDuration(d.ConsolidateAfter); err != nil {
			errs = append(errs, field.Invalid(dp.Child("consolidateAfter"), d.ConsolidateAfter, err.Error()))
		}
	}
	if n := len(d.Budgets); n > MaxBudgets {
		errs = append(errs, field.TooMany(dp.Child("budgets"), n, MaxBudgets))
	}
	for i, b := range d.Budgets {
		errs = append(errs, validateBudget(b, dp.Child("budgets").Index(i))...)
	}
	return errs
}

// ValidateRequirement checks one requirement: a qualified key, a known
// operator, values that fit the operator (Gt/Lt/Gte/Lte take one integer), and
// minValues in 1..50 and not above the number of In values.
func ValidateRequirement(r NodeSelectorRequirementWithMinValues, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(r.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, msg))
	}
	if r.Key == LabelHostname || r.Key == LabelNodeInitialized || r.Key == LabelNodeRegistered {
		errs = append(errs, field.Forbidden(p.Child("key"), "label is set per node and cannot be required"))
	}
	switch r.Operator {
	case OpIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "operator In needs at least one value"))
		}
	case OpNotIn:
	case OpExists, OpDoesNotExist:
		if len(r.Values) != 0 {
			errs = append(errs, field.Invalid(p.Child("values"), r.Values, fmt.Sprintf("operator %s takes no values", r.Operator)))
		}
	case OpGt, OpLt, OpGte, OpLte:
		if len(r.Values) != 1 {
			errs = append(errs, field.Invalid(p.Child("values"), r.Values, fmt.Sprintf("operator %s takes exactly one integer value", r.Operator)))
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil || !integerValueRE.MatchString(r.Values[0]) {
			errs = append(errs, field.Invalid(p.Child("values").Index(0), r.Values[0], fmt.Sprintf("operator %s needs an integer (at most 18 digits)", r.Operator)))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator,
			[]string{OpIn, OpNotIn, OpExists, OpDoesNotExist, OpGt, OpLt, OpGte, OpLte}))
	}
	for i, v := range r.Values {
		if len(v) > MaxLabelValueLength {
			errs = append(errs, field.TooLong(p.Child("values").Index(i), v, MaxLabelValueLength))
		}
	}
	if r.MinValues != nil {
		mv := *r.MinValues
		if mv < 1 || mv > 50 {
			errs = append(errs, field.Invalid(p.Child("minValues"), mv, "must be between 1 and 50"))
		} else if r.Operator == OpIn && mv > len(r.Values) {
			errs = append(errs, field.Invalid(p.Child("minValues"), mv, "is more than the number of values"))
		}
	}
	return errs
}

func validateTaint(t corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(t.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
	}
	for _, msg := range validation.IsValidLabelValue(t.Value) {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
	}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
			[]string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
	}
	return errs
}

// ParseNillableDuration parses a Karpenter duration field: whole hours,
// minutes and seconds ("720h", "1h30m", "30s"; DurationPattern) or "Never"
// (returned as nil).
func ParseNillableDuration(s string) (*time.Duration, error) {
	if s == "Never" {
		return nil, nil
	}
	if len(s) > MaxDurationLength || !durationRE.MatchString(s) {
		return nil, fmt.Errorf("must be a duration like 720h or 1h30m (hours, minutes, seconds) or Never")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Errorf("must be a duration like 720h or Never: %v", err)
	}
	if d < 0 {
		return nil, fmt.Errorf("must not be negative")
	}
	return &d, nil
}

// ParseBudgetNodes parses a disruption budget's nodes field: an integer count
// ("5") or a percentage of the pool's nodes ("10%"). It returns the number
// and whether it is a percentage.
func ParseBudgetNodes(s string) (int, bool, error) {
	pct := strings.HasSuffix(s, "%")
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || n < 0 || (pct && n > 100) || !budgetNodesRE.MatchString(s) {
		return 0, false, fmt.Errorf("must be a non-negative integer or a percentage 0-100%%")
	}
	return n, pct, nil
}

var (
	durationRE       = regexp.MustCompile(DurationPattern)
	integerValueRE   = regexp.MustCompile(IntegerValuePattern)
	budgetNodesRE    = regexp.MustCompile(BudgetNodesPattern)
	budgetScheduleRE = regexp.MustCompile(BudgetSchedulePattern)
)

// validateBudget checks one disruption budget: nodes, known reasons, and a
// schedule (cron) and duration set together.
func validateBudget(b Budget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, _, err := ParseBudgetNodes(b.Nodes); err != nil {
		errs = append(errs, field.Invalid(p.Child("nodes"), b.Nodes, err.Error()))
	}
	for i, r := range b.Reasons {
		if !slices.Contains(BudgetReasons, r) {
			errs = append(errs, field.NotSupported(p.Child("reasons").Index(i), r, BudgetReasons))
		}
	}
	if (b.Schedule == nil) != (b.Duration == nil) {
		errs = append(errs, field.Invalid(p, b.Nodes, "schedule and duration must be set together"))
	}
	if b.Schedule != nil {
		if _, err := cron.ParseStandard(*b.Schedule); err != nil || !budgetScheduleRE.MatchString(*b.Schedule) {
			errs = append(errs, field.Invalid(p.Child("schedule"), *b.Schedule,
				"must be a five-field cron expression (minute hour day-of-month month day-of-week) or @yearly, @monthly, @weekly, @daily, @hourly"))
		}
	}
	if b.Duration != nil && b.Duration.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("duration"), b.Duration.Duration.String(), "must not be negative"))
	}
	return errs
}

// ValidateNodePoolUpdate checks what only an update can break: a NodePool
// may not move between static (replicas set) and dynamic (replicas unset)
// provisioning, as Karpenter's CEL rule says.
func ValidateNodePoolUpdate(old, np *NodePool) field.ErrorList {
	if (old.Spec.Replicas == nil) != (np.Spec.Replicas == nil) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), np.Spec.Replicas,
			"Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes")}
	}
	return nil
}
