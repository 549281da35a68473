package activities

import (
	"strings"
	"testing"
)

// Karpenter's two policies are accepted; anything else is refused naming
// the value and the two it knows (the worker stops at start).
func TestValidateMinValuesPolicy(t *testing.T) {
	for _, p := range []string{"Strict", "BestEffort"} {
		if err := ValidateMinValuesPolicy(p); err != nil {
			t.Errorf("%s refused: %v", p, err)
		}
	}
	for _, p := range []string{"", "bestEffort", "Relaxed"} {
		err := ValidateMinValuesPolicy(p)
		if err == nil || !strings.Contains(err.Error(), `"`+p+`" is not one of Strict, BestEffort`) {
			t.Errorf("%q: error %v", p, err)
		}
	}
}
