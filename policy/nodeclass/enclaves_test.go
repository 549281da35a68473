package nodeclass

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// spec.enclaveOptions is honoured whichever way enabled is set; an object
// without enabled (the CRD requires it) is refused, naming the field.
func TestEnclaveOptionsWithoutEnabledRefused(t *testing.T) {
	for _, v := range []bool{true, false} {
		if u := Unsupported(&apiv1.EC2NodeClassSpec{EnclaveOptions: &apiv1.EnclaveOptions{Enabled: &v}}); u != nil {
			t.Errorf("enabled %v refused: %q", v, u)
		}
	}
	u := Unsupported(&apiv1.EC2NodeClassSpec{EnclaveOptions: &apiv1.EnclaveOptions{}})
	if want := "spec.enclaveOptions.enabled: required when enclaveOptions is set"; len(u) != 1 || u[0] != want {
		t.Errorf("enclaveOptions {}: %q, want [%q]", u, want)
	}
}
