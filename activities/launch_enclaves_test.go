package activities

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// spec.enclaveOptions reaches the launch template, and with enclaves
// enabled the launch keeps to the types that support them: an offering
// planned before the class enabled them is left out with the reason
// (Karpenter's nitroEnclavesCompatibility), the instance runs with them.
func TestLaunchCarriesEnclaveOptions(t *testing.T) {
	on := true
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
		func(cls *apiv1.EC2NodeClass, _ *apiv1.NodeClaim) {
			cls.Spec.EnclaveOptions = &apiv1.EnclaveOptions{Enabled: &on}
		})
	m5 := req.Offerings[0]
	only := req
	only.Offerings = []saga.Offering{m5}
	if _, _, _, err := launchAttempt(t, a, srv, only, nil); err == nil || !strings.Contains(err.Error(), m5.InstanceType+": does not support Nitro Enclaves") {
		t.Fatalf("%s alone: %v, want it left out for Nitro Enclaves", m5.InstanceType, err)
	}
	xl := m5
	xl.InstanceType = "m5.xlarge"
	req.Offerings = append(req.Offerings, xl)
	out, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := srv.Instance(out.ID)
	lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
	if inst.InstanceType != "m5.xlarge" || !inst.EnclavesEnabled || !lt.Data.EnclavesEnabled {
		t.Errorf("launched %s with enclaves %v from a template with %v, want m5.xlarge, enabled", inst.InstanceType, inst.EnclavesEnabled, lt.Data.EnclavesEnabled)
	}
}
