package v1

import (
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	capacityReservationIDRE = regexp.MustCompile(CapacityReservationIDPattern)
	accountIDRE             = regexp.MustCompile(AccountIDPattern)
)

// ValidateCapacityReservationTerms checks spec.capacityReservationSelectorTerms
// as Karpenter's CRD does (the EC2NodeClass CRD in deploy/crds makes the
// same checks in the API server): at most MaxSelectorTerms terms; each
// term sets tags, id or instanceMatchCriteria; id stands alone; ids match
// CapacityReservationIDPattern, ownerIDs AccountIDPattern;
// instanceMatchCriteria is open or targeted; at most MaxSelectorTags tags,
// none with an empty key or value. Every problem is returned with its path
// (p is the terms' path, nil for spec.capacityReservationSelectorTerms).
//
// Karpenter's CEL rule for id ("!self.all(x, has(x.id) && ...)") refuses a
// mixed term only when every term is one; this checks each term, as its
// message says.
func ValidateCapacityReservationTerms(terms []CapacityReservationSelectorTerm, p *field.Path) field.ErrorList {
	if p == nil {
		p = field.NewPath("spec", "capacityReservationSelectorTerms")
	}
	var errs field.ErrorList
	if len(terms) > MaxSelectorTerms {
		errs = append(errs, field.TooMany(p, len(terms), MaxSelectorTerms))
	}
	for i, t := range terms {
		tp := p.Index(i)
		if len(t.Tags) == 0 && t.ID == "" && t.InstanceMatchCriteria == "" {
			errs = append(errs, field.Required(tp, "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"))
		}
		if t.ID != "" && (len(t.Tags) > 0 || t.OwnerID != "" || t.InstanceMatchCriteria != "") {
			errs = append(errs, field.Invalid(tp.Child("id"), t.ID,
				"'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"))
		}
		if t.ID != "" && !capacityReservationIDRE.MatchString(t.ID) {
			errs = append(errs, field.Invalid(tp.Child("id"), t.ID, "must match "+CapacityReservationIDPattern))
		}
		if t.OwnerID != "" && !accountIDRE.MatchString(t.OwnerID) {
			errs = append(errs, field.Invalid(tp.Child("ownerID"), t.OwnerID, "must match "+AccountIDPattern+" (a 12-digit AWS account id)"))
		}
		if t.InstanceMatchCriteria != "" && t.InstanceMatchCriteria != InstanceMatchCriteriaOpen && t.InstanceMatchCriteria != InstanceMatchCriteriaTargeted {
			errs = append(errs, field.NotSupported(tp.Child("instanceMatchCriteria"), t.InstanceMatchCriteria,
				[]string{InstanceMatchCriteriaOpen, InstanceMatchCriteriaTargeted}))
		}
		if len(t.Tags) > MaxSelectorTags {
			errs = append(errs, field.TooMany(tp.Child("tags"), len(t.Tags), MaxSelectorTags))
		}
		keys := make([]string, 0, len(t.Tags))
		for k := range t.Tags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "" || t.Tags[k] == "" {
				errs = append(errs, field.Invalid(tp.Child("tags").Key(k), t.Tags[k], "empty tag keys or values aren't supported"))
			}
		}
	}
	return errs
}
