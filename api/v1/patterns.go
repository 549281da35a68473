package v1

// Patterns shared by Validate and the CRDs in deploy/crds: the CRD schemas
// carry the same strings (deploy's unit test checks they match), so the API
// server and the controller accept the same values.
const (
	// DurationPattern is a Karpenter duration field (expireAfter,
	// consolidateAfter) other than "Never": whole hours, minutes and seconds.
	DurationPattern = `^([0-9]+(s|m|h))+$`

	// IntegerValuePattern is the one value of a Gt or Lt requirement: an
	// integer of at most 18 digits (always fits an int64).
	IntegerValuePattern = `^[-+]?[0-9]{1,18}$`

	// BudgetNodesPattern is a disruption budget's nodes: a count or a
	// percentage 0-100%.
	// CapacityReservationIDPattern is a capacity reservation id, and
	// AccountIDPattern an AWS account id (capacityReservationSelectorTerms).
	CapacityReservationIDPattern = `^cr-[0-9a-z]+$`
	AccountIDPattern             = `^[0-9]{12}$`

	BudgetNodesPattern = `^((100|[0-9]{1,2})%|[0-9]{1,9})$`

	// BudgetSchedulePattern is a disruption budget's schedule: a standard
	// five-field cron expression (minute hour day-of-month month day-of-week;
	// numbers in range, *, ?, lists, ranges, steps, JAN-DEC and SUN-SAT names)
	// or one of the @annually/@yearly/@monthly/@weekly/@daily/@midnight/@hourly
	// macros. No time zones and no @every, as in Karpenter.
	BudgetSchedulePattern = `^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|(\*|\?|([0-5]?[0-9])(-([0-5]?[0-9]))?)(/0*[1-9][0-9]*)?(,(\*|\?|([0-5]?[0-9])(-([0-5]?[0-9]))?)(/0*[1-9][0-9]*)?)*\s+(\*|\?|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/0*[1-9][0-9]*)?(,(\*|\?|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/0*[1-9][0-9]*)?)*\s+(\*|\?|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/0*[1-9][0-9]*)?(,(\*|\?|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/0*[1-9][0-9]*)?)*\s+(\*|\?|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/0*[1-9][0-9]*)?(,(\*|\?|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/0*[1-9][0-9]*)?)*\s+(\*|\?|([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/0*[1-9][0-9]*)?(,(\*|\?|([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/0*[1-9][0-9]*)?)*)$`
)

// The Max constants bound lists, maps and strings
// as Karpenter's CRDs do (and keep the API server's CEL cost estimates small).
const (
	MaxRequirements     = 100
	MaxTaints           = 100 // each of taints and startupTaints
	MaxLabels           = 100 // template labels
	MaxBudgets          = 50
	MaxLabelValueLength = 63
	MaxNameLength       = 253
	// MaxDurationLength bounds every duration string ("720h", "Never").
	MaxDurationLength = 64
	// MaxSelectorTerms bounds each selector term list of an EC2NodeClass,
	// MaxSelectorTags the tags of one term.
	MaxSelectorTerms = 30
	MaxSelectorTags  = 20
)

// BudgetReasons are the disruption reasons a budget may be limited to.
var BudgetReasons = []string{"Underutilized", "Empty", "Drifted"}
