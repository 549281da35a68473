package deploy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed iam-policy.json
var iamPolicyJSON []byte

// IAMPolicy is deploy/iam-policy.json: the worker's IAM policy, with
// ${PLACEHOLDERS} left for envsubst.
type IAMPolicy struct {
	Version   string
	Statement []IAMStatement
}

// IAMStatement is one statement; Action and Resource accept a string or a
// list, as IAM does.
type IAMStatement struct {
	Sid       string
	Effect    string
	Action    StringOrList
	Resource  StringOrList
	Condition map[string]map[string]StringOrList
}

// StringOrList is an IAM field that holds one string or a list of them.
type StringOrList []string

// UnmarshalJSON accepts "x" or ["x", "y"].
func (s *StringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	err := json.Unmarshal(b, &many)
	*s = many
	return err
}

// ImpliedBy lists the actions IAM checks on behalf of a call: CreateFleet
// with a launch template and TagSpecifications authorizes ec2:RunInstances
// for each instance, ec2:CreateTags for the tags at creation and
// iam:PassRole for the launch template's instance profile role (AWS EC2
// User Guide, "Fleet prerequisites" / "Grant permission to tag resources
// during creation"); tags at CreateLaunchTemplate and
// CreateInstanceProfile need their tagging action, and adding a role to
// an instance profile passes the role.
var ImpliedBy = map[string][]string{
	"ec2:CreateFleet":              {"ec2:RunInstances", "ec2:CreateTags", "iam:PassRole"},
	"ec2:CreateLaunchTemplate":     {"ec2:CreateTags"},
	"iam:CreateInstanceProfile":    {"iam:TagInstanceProfile"},
	"iam:AddRoleToInstanceProfile": {"iam:PassRole"},
}

// IAMPolicyJSON returns the policy file's bytes.
func IAMPolicyJSON() []byte { return append([]byte(nil), iamPolicyJSON...) }

// LoadIAMPolicy parses the embedded policy strictly (unknown fields are an
// error).
func LoadIAMPolicy() (IAMPolicy, error) {
	dec := json.NewDecoder(strings.NewReader(string(iamPolicyJSON)))
	dec.DisallowUnknownFields()
	var p IAMPolicy
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("deploy/iam-policy.json: %w", err)
	}
	return p, nil
}
