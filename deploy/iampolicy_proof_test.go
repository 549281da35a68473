package deploy_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/joinery/joinery/deploy"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

// TestIAMPolicyLeastPrivilege proves deploy/iam-policy.json on the worker's
// authorization checks recorded by the integration tests
// TestLeastPrivilegeRBACAndIAM and TestReservedCapacityIsUsedFirst
// (testdata/iam-recording-*.json; rewrite them with
// JOINERY_UPDATE_IAM_RECORDING=1 after the worker's calls change):
// the policy allows every one of them; one subtest per statement shows
// the policy without it refuses one (no statement unused) and that each
// of its scopings refuses the check rewritten for another cluster.
func TestIAMPolicyLeastPrivilege(t *testing.T) {
	rec := readRecordings(t)
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
			for _, u := range sp.Unproven {
				t.Errorf("no recorded call uses %s of %s: record a test that does, or drop it", u, sp.Sid)
			}
			for _, l := range sp.Loose {
				t.Errorf("%s does not scope %s to the cluster: tighten it", l, sp.Sid)
			}
		})
	}
}

// recording is a saved iam-recording-*.json.
type recording struct {
	Vars      deploy.IAMPolicyVars
	Elsewhere map[string]string
	Checks    []awsauth.Check
}

// readRecordings joins the recordings (made in the same world: the same
// values and rewrites).
func readRecordings(t *testing.T) recording {
	t.Helper()
	files, err := filepath.Glob("testdata/iam-recording-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/iam-recording-*.json (%v)", err)
	}
	var all recording
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r recording
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if i > 0 && (r.Vars != all.Vars || !maps.Equal(r.Elsewhere, all.Elsewhere)) {
			t.Fatalf("%s was recorded in another world (%+v) than %s (%+v)", f, r.Vars, files[0], all.Vars)
		}
		all.Vars, all.Elsewhere = r.Vars, r.Elsewhere
		all.Checks = append(all.Checks, r.Checks...)
	}
	return all
}
