package world

import (
	"strings"
	"testing"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

func TestNewGuardRendersTheWorkerPolicy(t *testing.T) {
	o := Options{}.withDefaults()
	g, p, err := newGuard(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "deploy/iam-policy.json" || len(p.Statements) < 10 {
		t.Fatalf("worker policy %s with %d statements", p.Name, len(p.Statements))
	}
	worker := &awsauth.Caller{Identity: &awsauth.Identity{Name: "worker", ARN: "w", Policies: []*policy.Policy{p}}, Region: o.Region}
	describe := []awsauth.Check{{Action: "ec2:DescribeInstances", Resource: "*"}}
	if f := g.Authorize(worker, "ec2", "DescribeInstances", describe); f != nil {
		t.Errorf("the worker may not describe instances: %v", f)
	}
	if f := g.Authorize(worker, "ec2", "RunInstances", []awsauth.Check{{Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-east-1:123456789012:instance/*"}}); f == nil {
		t.Errorf("the worker may launch untagged instances")
	}

	o.IAMPolicy, o.IAMPolicyName = []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"arn:aws:ec2:${AWS_REGION}:${CLUSTER}:*"}}`), "narrow.json"
	if _, _, err := newGuard(o); err == nil || !strings.Contains(err.Error(), "narrow.json") || !strings.Contains(err.Error(), "unknown placeholder ${CLUSTER}") {
		t.Errorf("unknown placeholder: %v", err)
	}
	o.IAMPolicy = []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:*"}}`)
	if _, _, err := newGuard(o); err == nil || !strings.Contains(err.Error(), "IAM policy narrow.json: Statement[0].Resource") {
		t.Errorf("missing Resource: %v", err)
	}
}
