package activities

import "fmt"

// Karpenter's MIN_VALUES_POLICY values (--min-values-policy).
const (
	MinValuesPolicyStrict     = "Strict"
	MinValuesPolicyBestEffort = "BestEffort"
)

// ValidateMinValuesPolicy refuses a policy Karpenter does not know, with
// the values it knows, as Karpenter's options validation does.
func ValidateMinValuesPolicy(p string) error {
	if p != MinValuesPolicyStrict && p != MinValuesPolicyBestEffort {
		return fmt.Errorf("min values policy %q is not one of %s, %s", p, MinValuesPolicyStrict, MinValuesPolicyBestEffort)
	}
	return nil
}
