package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/joinery/joinery/deploy"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

// TestIAMPolicyLeastPrivilege proves deploy/iam-policy.json on the worker's
// authorization checks recorded by the integration test
// TestLeastPrivilegeRBACAndIAM (testdata/iam-recording.json; rewrite it
// with JOINERY_UPDATE_IAM_RECORDING=1 after the worker's calls change):
// the policy allows every one of them; one subtest per statement shows
// the policy without it refuses one (no statement unused) and that each
// of its scopings refuses the check rewritten for another cluster.
func TestIAMPolicyLeastPrivilege(t *testing.T) {
	b, err := os.ReadFile("testdata/iam-recording.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Vars      deploy.IAMPolicyVars
		Elsewhere map[string]string
		Checks    []awsauth.Check
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	doc, err := deploy.RenderIAMPolicy(deploy.IAMPolicyJSON(), rec.Vars)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Parse("deploy/iam-policy.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Checks {
		if d := p.Evaluate(policy.Request(c)); !d.Allowed {
			t.Errorf("the policy refuses the worker's %s on %s (keys %v)", c.Action, c.Resource, c.Context)
		}
	}
	for _, sp := range awsauth.LeastPrivilege(p, rec.Checks, rec.Elsewhere) {
		t.Run(fmt.Sprintf("statement %d %s", sp.Index, sp.Sid), func(t *testing.T) {
			if sp.Needed == nil {
				t.Errorf("no recorded call of the worker needs statement %s: remove it", sp.Sid)
			} else {
				t.Logf("without it, %s on %s is refused; scoped by %v", sp.Needed.Action, sp.Needed.Resource, sp.Tight)
			}
			if len(sp.Unused) > 0 {
				t.Logf("granted but unused in the recorded run: %v", sp.Unused)
			}
			for _, l := range sp.Loose {
				t.Errorf("%s does not scope %s to the cluster: tighten it", l, sp.Sid)
			}
		})
	}
}
