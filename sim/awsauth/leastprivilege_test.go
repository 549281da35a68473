package awsauth

import (
	"strings"
	"testing"

	"github.com/joinery/joinery/sim/awsauth/policy"
)

func TestLeastPrivilege(t *testing.T) {
	p := policy.MustParse("p", []byte(`{"Version":"2012-10-17","Statement":[
		{"Sid":"Terminate","Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		 "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1","aws:ResourceTag/kubernetes.io/cluster/c1":"owned"},"StringLike":{"aws:ResourceTag/pool":"*"}}},
		{"Sid":"Loose","Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1"}}},
		{"Sid":"AlsoTags","Effect":"Allow","Action":"ec2:CreateTags","Resource":"*"},
		{"Sid":"Unused","Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`))
	checks := []Check{
		{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:us-east-1:123456789012:instance/i-1", Context: policy.Context{
			"aws:ResourceTag/cluster": {"c1"}, "aws:ResourceTag/kubernetes.io/cluster/c1": {"owned"}, "aws:ResourceTag/pool": {"a"}}},
		{Action: "ec2:CreateTags", Resource: "arn:aws:ec2:us-east-1:123456789012:instance/i-1", Context: policy.Context{"aws:RequestTag/cluster": {"c1"}}},
		{Action: "ec2:RunInstances", Resource: "*"}, // refused: ignored
	}
	proofs := LeastPrivilege(p, checks, map[string]string{"c1": "other", "us-east-1": "us-west-2"})
	byName := map[string]StatementProof{}
	for _, sp := range proofs {
		byName[sp.Sid] = sp
	}
	if sp := byName["Terminate"]; sp.Needed == nil || len(sp.Loose) != 0 || len(sp.Tight) != 4 {
		t.Errorf("Terminate: %+v", sp)
	}
	// Loose and AlsoTags overlap: neither is needed alone, and the
	// condition of Loose does not bite (AlsoTags allows the rewrite).
	if sp := byName["Loose"]; sp.Needed != nil || len(sp.Loose) != 1 || !strings.Contains(sp.Loose[0], "still allowed") {
		t.Errorf("Loose: %+v", sp)
	}
	if sp := byName["Unused"]; sp.Needed != nil || len(sp.Unused) != 2 || sp.Unused[0] != "Action s3:getobject" {
		t.Errorf("Unused: %+v", sp)
	}
}

// A ForAllValues condition bounds a set (the tag keys a request writes):
// it is proven by a request with one value more, which it must refuse.
func TestLeastPrivilegeSetCondition(t *testing.T) {
	p := policy.MustParse("p", []byte(`{"Version":"2012-10-17","Statement":[
		{"Sid":"TagKeys","Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		 "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"},"ForAllValues:StringEquals":{"aws:TagKeys":["nodeclaim","Name"]}}},
		{"Sid":"AnyKeys","Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		 "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"},"ForAllValues:StringLike":{"aws:TagKeys":["*"]}}}]}`))
	check := Check{Action: "ec2:CreateTags", Resource: "arn:aws:ec2:us-east-1:123456789012:instance/i-1", Context: policy.Context{
		"aws:ResourceTag/cluster": {"c1"}, "aws:TagKeys": {"Name", "nodeclaim"}}}
	proofs := LeastPrivilege(p, []Check{check}, map[string]string{"c1": "other"})
	if sp := proofs[0]; len(sp.Tight) != 1 || len(sp.Loose) != 1 || !strings.Contains(sp.Loose[0], "aws:TagKeys") {
		t.Errorf("TagKeys beside AnyKeys: %+v; want the key set loose (AnyKeys allows more keys), the cluster tight", sp)
	}
	alone := policy.MustParse("p", []byte(`{"Version":"2012-10-17","Statement":[
		{"Sid":"TagKeys","Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		 "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"},"ForAllValues:StringEquals":{"aws:TagKeys":["nodeclaim","Name"]}}}]}`))
	if sp := LeastPrivilege(alone, []Check{check}, map[string]string{"c1": "other"})[0]; sp.Needed == nil || len(sp.Loose) != 0 || len(sp.Tight) != 2 {
		t.Errorf("TagKeys alone: %+v; want needed, both conditions tight", sp)
	}
}
