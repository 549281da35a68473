package aws_test

import (
	"github.com/joinery/joinery/deploy"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The IAM policy in deploy/iam-policy.json must hold exactly the actions the
// code calls. The calls are read from this package's source: every
// c.ec2.X( / ec2.NewXPaginator(c.ec2 / q.sqs.X( is one action, so a new
// call without a policy change fails this test.

var (
	ec2Call      = regexp.MustCompile(`\bc\.ec2\.(\w+)\(`)
	ec2Paginator = regexp.MustCompile(`\bec2\.New(\w+)Paginator\(c\.ec2\b`)
	sqsCall      = regexp.MustCompile(`\bq\.sqs\.(\w+)\(`)
	otherCall    = regexp.MustCompile(`\bc\.(ssm|iam|eks|pricing)\.(\w+)\(`)
	otherPager   = regexp.MustCompile(`\b(pricing)\.New(\w+)Paginator\(c\.pricing\b`)
	sdkClient    = regexp.MustCompile(`\b[cq]\.(ec2|sqs|ssm|iam|eks|pricing)\b`)
	awsService   = regexp.MustCompile(`"github\.com/aws/aws-sdk-go-v2/service/([\w/-]+)"`)
)

// notInWorker lists calls the package makes that the worker never does:
// the action, why, and the Go call of the cloud API that makes it, which
// no package of the worker may contain (TestNotInWorkerIsNotCalled). The
// integration run (test/integration/rbac_test.go) confirms the worker
// makes none of these operations.
var notInWorker = map[string]struct {
	why  string
	call *regexp.Regexp
	// launchPath entries are the adapter's own methods, which cloud/
	// itself calls (and whose SDK calls have the same names): only the
	// worker's other packages are checked for them.
	launchPath bool
}{
	"sqs:SendMessage": {"Queue.Send: tests and the local world's interruption simulator only",
		regexp.MustCompile(`\.Send\(ctx, `), false},
}

// allowedServices are the aws-sdk-go-v2 service packages the scanner knows.
var allowedServices = []string{"ec2", "ec2/types", "sqs", "sqs/types", "ssm", "iam", "iam/types", "eks", "pricing", "pricing/types"}

func codeActions(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range awsService.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(allowedServices, m[1]) {
				t.Errorf("%s imports aws-sdk-go-v2/service/%s: add its calls to the scanner in iam_test.go and to deploy/iam-policy.json", f, m[1])
			}
		}
		for n, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			where := f + ":" + strconv.Itoa(n+1)
			known := false
			for _, m := range ec2Call.FindAllStringSubmatch(line, -1) {
				got["ec2:"+m[1]], known = append(got["ec2:"+m[1]], where), true
			}
			for _, m := range ec2Paginator.FindAllStringSubmatch(line, -1) {
				got["ec2:"+m[1]], known = append(got["ec2:"+m[1]], where), true
			}
			for _, m := range sqsCall.FindAllStringSubmatch(line, -1) {
				got["sqs:"+m[1]], known = append(got["sqs:"+m[1]], where), true
			}
			for _, m := range otherCall.FindAllStringSubmatch(line, -1) {
				got[m[1]+":"+m[2]], known = append(got[m[1]+":"+m[2]], where), true
			}
			for _, m := range otherPager.FindAllStringSubmatch(line, -1) {
				got[m[1]+":"+m[2]], known = append(got[m[1]+":"+m[2]], where), true
			}
			accessor := strings.Contains(line, "return c.ec2 }") || strings.Contains(line, "return q.sqs }") ||
				strings.Contains(line, "c.pricing == nil")
			if !known && !accessor && sdkClient.MatchString(line) && !strings.Contains(line, "c.ec2.") && !isConstruction(line) && !isNewClient(line) {
				t.Errorf("%s: SDK client use the scanner does not understand; extend iam_test.go:\n\t%s", where, strings.TrimSpace(line))
			}
		}
	}
	return got
}

// isNewClient is a line of New that builds the SSM, IAM or EKS client.
func isNewClient(line string) bool {
	return regexp.MustCompile(`\bc\.(ssm|iam|eks|pricing) = (ssm|iam|eks|pricing)\.NewFromConfig\(`).MatchString(line)
}

// isConstruction is a line that stores or passes the client without calling it.
func isConstruction(line string) bool {
	return strings.Contains(line, "&Client{ec2:") || strings.Contains(line, "&Queue{sqs:")
}

func readPolicy(t *testing.T) deploy.IAMPolicy {
	t.Helper()
	b := deploy.IAMPolicyJSON()
	p, err := deploy.LoadIAMPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "2012-10-17" {
		t.Errorf("policy Version %q", p.Version)
	}
	// Only the documented placeholders (chart README and docs/security.md, "IAM policy").
	vars := regexp.MustCompile(`\$\{([^}]*)\}`).FindAllStringSubmatch(string(b), -1)
	for _, v := range vars {
		if !slices.Contains([]string{"AWS_PARTITION", "AWS_REGION", "AWS_ACCOUNT_ID", "CLUSTER_NAME", "NODE_ROLE_NAME", "INTERRUPTION_QUEUE_NAME"}, v[1]) {
			t.Errorf("undocumented placeholder %s in deploy/iam-policy.json", v[0])
		}
	}
	return p
}

func TestIAMPolicyMatchesCode(t *testing.T) {
	calls := codeActions(t)
	if len(calls) < 5 {
		t.Fatalf("scanner found only %v: is it still reading cloud/*.go?", calls)
	}
	want := map[string]string{}
	for a, where := range calls {
		if _, ok := notInWorker[a]; ok {
			continue
		}
		want[a] = strings.Join(where, ", ")
		for _, imp := range deploy.ImpliedBy[a] {
			want[imp] = "implied by " + a
		}
	}
	for a := range notInWorker {
		if _, ok := calls[a]; !ok {
			t.Errorf("notInWorker lists %s, which cloud/ no longer calls", a)
		}
	}
	got := map[string]bool{}
	for _, s := range readPolicy(t).Statement {
		if s.Effect != "Allow" || s.Sid == "" {
			t.Errorf("statement %q: Effect %q (every statement is a named Allow)", s.Sid, s.Effect)
		}
		for _, a := range s.Action {
			if strings.Contains(a, "*") {
				t.Errorf("statement %s: wildcard action %s", s.Sid, a)
			}
			got[a] = true
		}
	}
	var missing, extra []string
	for a, where := range want {
		if !got[a] {
			missing = append(missing, a+" ("+where+")")
		}
	}
	for a := range got {
		if _, ok := want[a]; !ok {
			extra = append(extra, a)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("deploy/iam-policy.json lacks actions the code calls:\n\t%s", strings.Join(missing, "\n\t"))
	}
	if len(extra) > 0 {
		t.Errorf("deploy/iam-policy.json grants actions no code calls: %v", extra)
	}
}

// TestIAMPolicyScoping checks the mutating statements carry the conditions
// docs/security.md (IAM) promises.
func TestIAMPolicyScoping(t *testing.T) {
	p := readPolicy(t)
	cond := func(sid, op, key, value string) {
		t.Helper()
		for _, s := range p.Statement {
			if s.Sid == sid {
				if !slices.Contains(s.Condition[op][key], value) {
					t.Errorf("statement %s: condition %s %s = %v, want %q", sid, op, key, s.Condition[op][key], value)
				}
				return
			}
		}
		t.Errorf("no statement %s", sid)
	}
	cond("TerminateClusterInstances", "StringEquals", "aws:ResourceTag/joinery.sh/cluster", "${CLUSTER_NAME}")
	cond("LaunchTaggedInstances", "StringEquals", "aws:RequestTag/joinery.sh/cluster", "${CLUSTER_NAME}")
	cond("LaunchFromClusterLaunchTemplate", "StringEquals", "aws:ResourceTag/joinery.sh/cluster", "${CLUSTER_NAME}")
	cond("TagOnLaunchOnly", "StringEquals", "aws:RequestTag/joinery.sh/cluster", "${CLUSTER_NAME}")
	cond("TagOnLaunchOnly", "StringEquals", "ec2:CreateAction", "CreateFleet")
	cond("PassNodeRole", "StringEquals", "iam:PassedToService", "ec2.amazonaws.com")
	cond("RegionalReadActions", "StringEquals", "aws:RequestedRegion", "${AWS_REGION}")
	for _, s := range p.Statement {
		for _, a := range s.Action {
			// pricing:GetProducts is a read with no resource-level
			// permissions (Resource "*" only), called in the Pricing API's
			// region (cloud.PricingRegion), not the cluster's: a
			// RequestedRegion condition would deny it outside us-east-1.
			if a == "pricing:GetProducts" && len(s.Condition["StringEquals"]["aws:RequestedRegion"]) > 0 {
				t.Errorf("statement %s: %s is called in the Pricing API's region; no aws:RequestedRegion condition", s.Sid, a)
			}
			mutating := !strings.HasPrefix(a, "ec2:Describe") && !strings.HasPrefix(a, "sqs:") && a != "pricing:GetProducts"
			for _, r := range s.Resource {
				if r == "*" && mutating {
					t.Errorf("statement %s: %s on Resource \"*\"", s.Sid, a)
				}
				if (strings.Contains(r, ":instance/") || strings.Contains(r, ":volume/")) && len(s.Condition) == 0 {
					t.Errorf("statement %s: %s on %s without a tag condition", s.Sid, a, r)
				}
			}
		}
	}
}

// TestNotInWorkerIsNotCalled backs notInWorker: no package the worker is
// built from (cloud included, tests excluded) calls those methods.
func TestNotInWorkerIsNotCalled(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/joinery/joinery"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}{{end}}`, "./worker")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./worker: %v", err)
	}
	files := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		for _, g := range f[1:] {
			b, err := os.ReadFile(filepath.Join(f[0], g))
			if err != nil {
				t.Fatal(err)
			}
			files++
			for action, nw := range notInWorker {
				if nw.launchPath && filepath.Base(f[0]) == "cloud" {
					continue
				}
				for n, line := range strings.Split(string(b), "\n") {
					if nw.call.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
						t.Errorf("%s/%s:%d calls %s: the worker then needs %s in deploy/iam-policy.json (remove it from notInWorker)",
							f[0], g, n+1, strings.TrimSpace(line), action)
					}
				}
			}
		}
	}
	if files < 20 {
		t.Fatalf("only %d worker files", files)
	}
}
