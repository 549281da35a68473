package deploy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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

// IAMPolicyVars are the values of deploy/iam-policy.json's placeholders.
type IAMPolicyVars struct {
	Partition             string // AWS_PARTITION: aws, aws-cn, aws-us-gov
	Region                string // AWS_REGION
	AccountID             string // AWS_ACCOUNT_ID
	ClusterName           string // CLUSTER_NAME: the worker's --cluster-name
	NodeRoleName          string // NODE_ROLE_NAME: the role EC2NodeClasses name in spec.role
	InterruptionQueueName string // INTERRUPTION_QUEUE_NAME
}

var placeholder = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)

// RenderIAMPolicy fills the ${PLACEHOLDERS} of a policy in
// deploy/iam-policy.json's format (as envsubst does for the chart's
// users); IAM's own policy variables (${aws:username}) are left alone. A
// placeholder it does not know, or one whose value is empty, is an error.
func RenderIAMPolicy(doc []byte, v IAMPolicyVars) ([]byte, error) {
	vals := map[string]string{
		"AWS_PARTITION": v.Partition, "AWS_REGION": v.Region, "AWS_ACCOUNT_ID": v.AccountID,
		"CLUSTER_NAME": v.ClusterName, "NODE_ROLE_NAME": v.NodeRoleName, "INTERRUPTION_QUEUE_NAME": v.InterruptionQueueName,
	}
	var errs []string
	out := placeholder.ReplaceAllFunc(doc, func(m []byte) []byte {
		val, known := vals[string(m[2:len(m)-1])]
		switch {
		case !known:
			errs = append(errs, "unknown placeholder "+string(m))
		case val == "":
			errs = append(errs, "no value for "+string(m))
		}
		return []byte(val)
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("IAM policy: %s", strings.Join(slices.Compact(errs), "; "))
	}
	return out, nil
}
