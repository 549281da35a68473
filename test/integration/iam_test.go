//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/joinery/joinery/deploy"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

// iamRecording is where JOINERY_UPDATE_IAM_RECORDING=1 saves the worker's
// recorded checks of a test: deploy's unit test proves the policy on them
// all without a world (TestIAMPolicyLeastPrivilege).
func iamRecording(name string) string { return "../../deploy/testdata/iam-recording-" + name + ".json" }

// volatileKeys change with every run; the recording leaves them out.
var volatileKeys = []string{"aws:CurrentTime", "aws:EpochTime"}

// checkWorkerIAM: the world evaluated every AWS call the worker made
// against deploy/iam-policy.json (rendered for the world), resource by
// resource. None may have been refused; the test's own calls (the admin's
// key) are not the worker's; and the policy is least-privilege on what
// the worker did (proveLeastPrivilege).
func checkWorkerIAM(t *testing.T, e *env) {
	t.Helper()
	checks, ops, others := workerChecks(t, e)
	t.Logf("AWS operations by the worker: %v; by others (not counted): %v", ops, others)
	for _, want := range []string{"ec2:CreateFleet", "ec2:TerminateInstances", "sqs:ReceiveMessage", "sqs:DeleteMessage", "ec2:CreateLaunchTemplate",
		"ec2:DescribeImages", "ssm:GetParameter", "iam:CreateInstanceProfile", "eks:DescribeCluster", "ec2:DescribeInstanceTypes", "pricing:GetProducts"} {
		if ops[want] == 0 {
			t.Errorf("the run made no %s: it does not cover the policy", want)
		}
	}
	for _, own := range []string{"ec2:DescribeInstances", "sqs:SendMessage"} {
		if others[own] == 0 {
			t.Errorf("the test's own %s was not recorded apart from the worker's: the filter is not tested", own)
		}
	}
	checks = distinct(checks)
	saveRecording(t, e, "least-privilege", checks)
	proveLeastPrivilege(t, e.w.WorkerPolicy(), append(checks, recordedElsewhere(t, e)...), e.w.Elsewhere())
}

// recordedElsewhere are the worker's checks the other tests recorded
// (deploy/testdata/iam-recording-*.json, in a world like this one): a
// statement only they need (a gang's placement group, a reservation) is
// needed all the same.
func recordedElsewhere(t *testing.T, e *env) []awsauth.Check {
	t.Helper()
	files, err := filepath.Glob(iamRecording("*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []awsauth.Check
	for _, f := range files {
		if f == iamRecording("least-privilege") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Vars   deploy.IAMPolicyVars `json:"vars"`
			Checks []awsauth.Check      `json:"checks"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if r.Vars != e.w.PolicyVars() {
			t.Fatalf("%s was recorded in another world (%+v) than this one (%+v)", f, r.Vars, e.w.PolicyVars())
		}
		out = append(out, r.Checks...)
	}
	return out
}

// recordWorkerIAM records the worker's authorization checks from now on;
// at the test's end (when it passed) none may have been refused, and
// JOINERY_UPDATE_IAM_RECORDING=1 saves them under name for deploy's proof.
func recordWorkerIAM(t *testing.T, e *env, name string) {
	t.Helper()
	e.w.Auth.SetRecording(true)
	t.Cleanup(func() {
		if !t.Failed() {
			checks, _, _ := workerChecks(t, e)
			saveRecording(t, e, name, distinct(checks))
		}
	})
}

// workerChecks are the recorded checks of the worker's calls (each refusal
// is an error: deploy/iam-policy.json lacks a grant), with the operations
// the worker and the others (the admin's key) made.
func workerChecks(t *testing.T, e *env) (checks []awsauth.Check, ops, others map[string]int) {
	t.Helper()
	ops, others = map[string]int{}, map[string]int{}
	for _, c := range e.w.Auth.Calls() {
		op := c.Service + ":" + c.Operation
		if c.Principal != "worker" {
			others[op]++
			continue
		}
		ops[op]++
		for _, r := range c.Results {
			if !r.Allowed {
				t.Errorf("the worker's %s was refused %s on %s (keys %v): deploy/iam-policy.json lacks a grant", op, r.Action, r.Resource, r.Context)
			}
			checks = append(checks, r.Check)
		}
	}
	return checks, ops, others
}

// proveLeastPrivilege is one subtest per statement: some recorded check
// needs it, and each of its scopings refuses the check rewritten for
// another cluster.
func proveLeastPrivilege(t *testing.T, p *policy.Policy, checks []awsauth.Check, elsewhere map[string]string) {
	t.Helper()
	for _, sp := range awsauth.LeastPrivilege(p, checks, elsewhere) {
		t.Run(fmt.Sprintf("statement %d %s", sp.Index, sp.Sid), func(t *testing.T) {
			if sp.Needed == nil {
				t.Errorf("no call of the worker needs statement %s: remove it from deploy/iam-policy.json", sp.Sid)
			} else {
				t.Logf("without it, %s on %s is refused", sp.Needed.Action, sp.Needed.Resource)
			}
			for _, l := range sp.Loose {
				t.Errorf("%s does not scope %s to this cluster: %s", l, sp.Sid, "tighten it")
			}
			t.Logf("scoped by %v", sp.Tight)
			if len(sp.Unproven) > 0 {
				t.Logf("not exercised in this run (deploy's TestIAMPolicyLeastPrivilege proves them on every recording): %v", sp.Unproven)
			}
			if len(sp.Unused) > 0 {
				t.Logf("granted but unused in this run: %v", sp.Unused)
			}
		})
	}
}

// distinct drops repeated checks (every poll repeats its Describe) and
// the volatile keys.
func distinct(checks []awsauth.Check) []awsauth.Check {
	seen := map[string]bool{}
	var out []awsauth.Check
	for _, c := range checks {
		ctx := policy.Context{}
		for k, v := range c.Context {
			if !slices.Contains(volatileKeys, k) {
				ctx[k] = v
			}
		}
		c.Context = ctx
		b, _ := json.Marshal(c) // map keys sorted
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Action < out[j].Action })
	return out
}

// saveRecording writes the checks for deploy's unit test when asked to.
func saveRecording(t *testing.T, e *env, name string, checks []awsauth.Check) {
	t.Helper()
	if os.Getenv("JOINERY_UPDATE_IAM_RECORDING") != "1" {
		return
	}
	b, err := json.MarshalIndent(struct {
		Note      string               `json:"note"`
		Vars      deploy.IAMPolicyVars `json:"vars"`
		Elsewhere map[string]string    `json:"elsewhere"`
		Checks    []awsauth.Check      `json:"checks"`
	}{"the worker's authorization checks in " + t.Name() + " (JOINERY_UPDATE_IAM_RECORDING=1 rewrites it)",
		e.w.PolicyVars(), e.w.Elsewhere(), checks}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(iamRecording(name), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d checks to %s", len(checks), iamRecording(name))
}
