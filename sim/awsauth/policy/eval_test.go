package policy

import (
	"testing"
)

// Outcomes.
const (
	allow    = "allow"
	implicit = "implicit deny"
	explicit = "explicit deny"
)

func outcome(d Decision) string {
	switch {
	case d.ExplicitDeny:
		return explicit
	case d.Allowed:
		return allow
	}
	return implicit
}

type evalCase struct {
	name   string
	policy string
	req    Request
	want   string
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse("test", []byte(c.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := outcome(p.Evaluate(c.req)); got != c.want {
				t.Errorf("%s %s with %v: %s, want %s", c.req.Action, c.req.Resource, c.req.Context, got, c.want)
			}
		})
	}
}

func req(action, resource string, kv ...string) Request {
	ctx := Context{}
	for i := 0; i+1 < len(kv); i += 2 {
		ctx[kv[i]] = append(ctx[kv[i]], kv[i+1])
	}
	return Request{Action: action, Resource: resource, Context: ctx}
}

// The basic evaluation logic (IAM User Guide, "Policy evaluation logic":
// explicit deny, then allow, then the implicit deny).
func TestEvaluateEffects(t *testing.T) {
	const s3Read = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::example-bucket/*"}}`
	const allowButTerminate = `{"Version":"2012-10-17","Statement":[
		{"Sid":"All","Effect":"Allow","Action":"ec2:*","Resource":"*"},
		{"Sid":"NoTerminate","Effect":"Deny","Action":"ec2:TerminateInstances","Resource":"*"}]}`
	const notAction = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","NotAction":"iam:*","Resource":"*"}}`
	const notResource = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},
		{"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::hr-bucket","arn:aws:s3:::hr-bucket/*"]}]}`
	runCases(t, []evalCase{
		{"allow", s3Read, req("s3:GetObject", "arn:aws:s3:::example-bucket/report.csv"), allow},
		{"implicit deny: another action", s3Read, req("s3:PutObject", "arn:aws:s3:::example-bucket/report.csv"), implicit},
		{"implicit deny: another bucket", s3Read, req("s3:GetObject", "arn:aws:s3:::other-bucket/report.csv"), implicit},
		{"explicit deny wins over allow", allowButTerminate, req("ec2:TerminateInstances", "arn:aws:ec2:us-east-1:123456789012:instance/i-1"), explicit},
		{"allow beside a deny for another action", allowButTerminate, req("ec2:RunInstances", "arn:aws:ec2:us-east-1:123456789012:instance/*"), allow},
		{"NotAction allows the rest", notAction, req("ec2:DescribeInstances", "*"), allow},
		{"NotAction leaves its actions denied", notAction, req("iam:CreateUser", "arn:aws:iam::123456789012:user/bob"), implicit},
		{"NotResource denies everything else", notResource, req("s3:GetObject", "arn:aws:s3:::finance/x"), explicit},
		{"NotResource spares its resources", notResource, req("s3:GetObject", "arn:aws:s3:::hr-bucket/x"), allow},
	})
}

// Action names are case-insensitive and take * and ? (IAM JSON policy
// elements: Action); Resource ARNs match component by component.
func TestEvaluateWildcards(t *testing.T) {
	const describe = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":["ec2:Describe*","ec2:*Instances","ec2:Get?onsoleOutput"],"Resource":"*"}}`
	const instances = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"arn:aws:ec2:us-east-1:*:instance/*"}}`
	const images = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":["arn:aws:ec2:*::image/ami-*","arn:aws:ec2:us-east-1:*:snapshot/*","arn:aws:ec2:us-east-?:*:subnet/*"]}}`
	const scoped = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"arn:aws:ec2:*:*:instance/*"}}`
	runCases(t, []evalCase{
		{"prefix wildcard", describe, req("ec2:DescribeSubnets", "*"), allow},
		{"suffix wildcard", describe, req("ec2:TerminateInstances", "*"), allow},
		{"? wildcard", describe, req("ec2:GetConsoleOutput", "*"), allow},
		{"case-insensitive action", describe, req("EC2:describesubnets", "*"), allow},
		{"no action match", describe, req("ec2:CreateTags", "*"), implicit},
		{"resource in region", instances, req("ec2:TerminateInstances", "arn:aws:ec2:us-east-1:123456789012:instance/i-0abc"), allow},
		{"resource in another region", instances, req("ec2:TerminateInstances", "arn:aws:ec2:us-west-2:123456789012:instance/i-0abc"), implicit},
		{"resource of another type", instances, req("ec2:TerminateInstances", "arn:aws:ec2:us-east-1:123456789012:volume/vol-1"), implicit},
		{"wildcard region, empty account", images, req("ec2:RunInstances", "arn:aws:ec2:eu-west-1::image/ami-0123"), allow},
		{"* matches an empty account", images, req("ec2:RunInstances", "arn:aws:ec2:us-east-1::snapshot/snap-1"), allow},
		{"? in a component", images, req("ec2:RunInstances", "arn:aws:ec2:us-east-2:123456789012:subnet/subnet-1"), allow},
		{"? is one character", images, req("ec2:RunInstances", "arn:aws:ec2:us-east-10:123456789012:subnet/subnet-1"), implicit},
		{"* does not cross components", images, req("ec2:RunInstances", "arn:aws:ec2:eu-west-1:123456789012:image/ami-0123"), implicit},
		{"an ARN pattern never matches an action without resources", scoped, req("ec2:DescribeInstances", "*"), implicit},
	})
}

// The shapes of deploy/iam-policy.json and Karpenter's controller policy:
// tag conditions on request and resource, ec2:CreateAction, PassRole.
func TestEvaluateTagConditions(t *testing.T) {
	const launch = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":["ec2:RunInstances","ec2:CreateFleet"],
		"Resource":["arn:aws:ec2:us-east-1:*:instance/*","arn:aws:ec2:us-east-1:*:volume/*"],
		"Condition":{"StringEquals":{"aws:RequestTag/joinery.sh/cluster":"prod"},
		             "StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}}}`
	const terminate = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		"Condition":{"StringEquals":{"aws:ResourceTag/joinery.sh/cluster":"prod"}}}}`
	const tagOnCreate = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:*:instance/*",
		"Condition":{"StringEquals":{"ec2:CreateAction":["RunInstances","CreateFleet"]}}}}`
	const passRole = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"iam:PassRole","Resource":"arn:aws:iam::123456789012:role/NodeRole",
		"Condition":{"StringEquals":{"iam:PassedToService":["ec2.amazonaws.com","ec2.amazonaws.com.cn"]}}}}`
	inst := "arn:aws:ec2:us-east-1:123456789012:instance/*"
	runCases(t, []evalCase{
		{"required tags present", launch, req("ec2:RunInstances", inst, "aws:RequestTag/joinery.sh/cluster", "prod", "aws:RequestTag/karpenter.sh/nodepool", "default"), allow},
		{"a required tag missing", launch, req("ec2:RunInstances", inst, "aws:RequestTag/joinery.sh/cluster", "prod"), implicit},
		{"another cluster's tag", launch, req("ec2:RunInstances", inst, "aws:RequestTag/joinery.sh/cluster", "staging", "aws:RequestTag/karpenter.sh/nodepool", "default"), implicit},
		{"condition keys are case-insensitive", launch, req("ec2:RunInstances", inst, "AWS:RequestTag/JOINERY.SH/CLUSTER", "prod", "aws:requesttag/karpenter.sh/nodepool", "x"), allow},
		{"condition values are case-sensitive", launch, req("ec2:RunInstances", inst, "aws:RequestTag/joinery.sh/cluster", "Prod", "aws:RequestTag/karpenter.sh/nodepool", "x"), implicit},
		{"resource tag", terminate, req("ec2:TerminateInstances", "arn:aws:ec2:us-east-1:1:instance/i-1", "aws:ResourceTag/joinery.sh/cluster", "prod"), allow},
		{"untagged resource", terminate, req("ec2:TerminateInstances", "arn:aws:ec2:us-east-1:1:instance/i-1"), implicit},
		{"tag on create, one of the values (OR)", tagOnCreate, req("ec2:CreateTags", inst, "ec2:CreateAction", "CreateFleet"), allow},
		{"tag after create", tagOnCreate, req("ec2:CreateTags", inst), implicit},
		{"PassRole to EC2", passRole, req("iam:PassRole", "arn:aws:iam::123456789012:role/NodeRole", "iam:PassedToService", "ec2.amazonaws.com"), allow},
		{"PassRole to another service", passRole, req("iam:PassRole", "arn:aws:iam::123456789012:role/NodeRole", "iam:PassedToService", "lambda.amazonaws.com"), implicit},
		{"PassRole of another role", passRole, req("iam:PassRole", "arn:aws:iam::123456789012:role/Admin", "iam:PassedToService", "ec2.amazonaws.com"), implicit},
	})
}

// Condition operators (IAM JSON policy elements: Condition operators),
// with the examples the AWS documentation gives for each.
func TestEvaluateOperators(t *testing.T) {
	// "AWS: Denies access to AWS based on the requested Region".
	const regions = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},
		{"Effect":"Deny","NotAction":["iam:*","sts:*"],"Resource":"*",
		 "Condition":{"StringNotEquals":{"aws:RequestedRegion":["eu-central-1","eu-west-1"]}}}]}`
	const like = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*",
		"Condition":{"StringLike":{"aws:ResourceTag/karpenter.sh/nodepool":"*"},"StringNotLike":{"aws:ResourceTag/team":"ops-*"}}}}`
	const ifExists = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*",
		"Condition":{"StringLikeIfExists":{"ec2:InstanceType":["t1.*","t2.*","m3.*"]}}}}`
	const equalsIfExists = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
		"Condition":{"StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"prod"}}}}`
	const null = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},
		{"Effect":"Deny","Action":"ec2:CreateFleet","Resource":"*","Condition":{"Null":{"aws:RequestTag/joinery.sh/cluster":"true"}}}]}`
	const notNull = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateFleet","Resource":"*","Condition":{"Null":{"aws:RequestTag/team":"false"}}}}`
	const boolean = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},
		{"Effect":"Deny","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`
	const arn = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*",
		"Condition":{"ArnLike":{"ec2:LaunchTemplate":"arn:aws:ec2:*:123456789012:launch-template/lt-09477bcd97b0d3*"}}}}`
	const arnEquals = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*",
		"Condition":{"ArnEquals":{"aws:SourceArn":"arn:aws:sns:us-east-1:123456789012:topic"}}}}`
	const tz = "arn:aws:ec2:us-east-1:123456789012:launch-template/lt-09477bcd97b0d3abc"
	runCases(t, []evalCase{
		{"StringNotEquals: an allowed region", regions, req("ec2:RunInstances", "*", "aws:RequestedRegion", "eu-west-1"), allow},
		{"StringNotEquals: another region", regions, req("ec2:RunInstances", "*", "aws:RequestedRegion", "us-east-1"), explicit},
		{"StringNotEquals: absent key holds", regions, req("ec2:RunInstances", "*"), explicit},
		{"StringNotEquals: excluded action", regions, req("iam:CreateRole", "*", "aws:RequestedRegion", "us-east-1"), allow},
		{"StringLike * needs the key", like, req("ec2:TerminateInstances", "*"), implicit},
		{"StringLike and StringNotLike (AND)", like, req("ec2:TerminateInstances", "*", "aws:ResourceTag/karpenter.sh/nodepool", "a"), allow},
		{"StringNotLike refuses a match", like, req("ec2:TerminateInstances", "*", "aws:ResourceTag/karpenter.sh/nodepool", "a", "aws:ResourceTag/team", "ops-1"), implicit},
		{"IfExists: key present, matching", ifExists, req("ec2:RunInstances", "*", "ec2:InstanceType", "t2.micro"), allow},
		{"IfExists: key present, not matching", ifExists, req("ec2:RunInstances", "*", "ec2:InstanceType", "m5.large"), implicit},
		{"IfExists: key absent", ifExists, req("ec2:RunInstances", "*"), allow},
		{"StringEqualsIfExists present", equalsIfExists, req("ec2:CreateTags", "*", "aws:RequestTag/eks:eks-cluster-name", "other"), implicit},
		{"StringEqualsIfExists absent", equalsIfExists, req("ec2:CreateTags", "*"), allow},
		{"Null true: key missing", null, req("ec2:CreateFleet", "*"), explicit},
		{"Null true: key present", null, req("ec2:CreateFleet", "*", "aws:RequestTag/joinery.sh/cluster", "x"), allow},
		{"Null false: key present", notNull, req("ec2:CreateFleet", "*", "aws:RequestTag/team", "a"), allow},
		{"Null false: key missing", notNull, req("ec2:CreateFleet", "*"), implicit},
		{"Bool false", boolean, req("s3:GetObject", "*", "aws:SecureTransport", "false"), explicit},
		{"Bool true", boolean, req("s3:GetObject", "*", "aws:SecureTransport", "true"), allow},
		{"Bool absent", boolean, req("s3:GetObject", "*"), allow},
		{"ArnLike match", arn, req("ec2:RunInstances", "*", "ec2:LaunchTemplate", tz), allow},
		{"ArnLike other account", arn, req("ec2:RunInstances", "*", "ec2:LaunchTemplate", "arn:aws:ec2:us-east-1:999999999999:launch-template/lt-09477bcd97b0d3abc"), implicit},
		{"ArnLike absent", arn, req("ec2:RunInstances", "*"), implicit},
		{"ArnEquals", arnEquals, req("sqs:SendMessage", "*", "aws:SourceArn", "arn:aws:sns:us-east-1:123456789012:topic"), allow},
		{"ArnEquals other", arnEquals, req("sqs:SendMessage", "*", "aws:SourceArn", "arn:aws:sns:us-east-1:123456789012:topic2"), implicit},
	})
}

// Set operators on multivalued keys (IAM User Guide, "Multivalued context
// keys"): ForAllValues is vacuously true, ForAnyValue needs a value.
func TestEvaluateSetOperators(t *testing.T) {
	const forAll = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
		"Condition":{"ForAllValues:StringEquals":{"aws:TagKeys":["eks:eks-cluster-name","karpenter.sh/nodeclaim","Name"]}}}}`
	const forAny = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
		"Condition":{"ForAnyValue:StringEquals":{"aws:TagKeys":["environment","cost-center"]}}}}`
	const forAnyIfExists = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
		"Condition":{"ForAnyValue:StringLikeIfExists":{"aws:TagKeys":"env*"}}}}`
	const forAllNot = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
		"Condition":{"ForAllValues:StringNotLike":{"aws:TagKeys":"aws:*"}}}}`
	tagKeys := func(keys ...string) Request {
		return Request{Action: "ec2:CreateTags", Resource: "*", Context: Context{"aws:TagKeys": keys}}
	}
	runCases(t, []evalCase{
		{"ForAllValues: a subset", forAll, tagKeys("Name", "karpenter.sh/nodeclaim"), allow},
		{"ForAllValues: one key outside", forAll, tagKeys("Name", "team"), implicit},
		{"ForAllValues: no keys (vacuous)", forAll, tagKeys(), allow},
		{"ForAnyValue: one key inside", forAny, tagKeys("team", "environment"), allow},
		{"ForAnyValue: none inside", forAny, tagKeys("team"), implicit},
		{"ForAnyValue: no keys", forAny, tagKeys(), implicit},
		{"ForAnyValue IfExists: no keys", forAnyIfExists, tagKeys(), allow},
		{"ForAnyValue IfExists: present, no match", forAnyIfExists, tagKeys("team"), implicit},
		{"ForAllValues negated: none reserved", forAllNot, tagKeys("team", "env"), allow},
		{"ForAllValues negated: a reserved key", forAllNot, tagKeys("team", "aws:x"), implicit},
	})
}

// Multiple keys in one operator block are ANDed, multiple values ORed,
// and so are several operators.
func TestEvaluateConditionLogic(t *testing.T) {
	const p = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"iam:CreateInstanceProfile","Resource":"*",
		"Condition":{"StringEquals":{"aws:RequestTag/cluster":"prod","aws:RequestTag/region":["us-east-1","us-west-2"]},
		             "StringLike":{"aws:RequestTag/nodeclass":"*"}}}}`
	runCases(t, []evalCase{
		{"all keys, one of the values", p, req("iam:CreateInstanceProfile", "*", "aws:RequestTag/cluster", "prod", "aws:RequestTag/region", "us-west-2", "aws:RequestTag/nodeclass", "a"), allow},
		{"one key wrong", p, req("iam:CreateInstanceProfile", "*", "aws:RequestTag/cluster", "prod", "aws:RequestTag/region", "eu-west-1", "aws:RequestTag/nodeclass", "a"), implicit},
		{"one operator failing", p, req("iam:CreateInstanceProfile", "*", "aws:RequestTag/cluster", "prod", "aws:RequestTag/region", "us-east-1"), implicit},
	})
}

// Numeric, date and IP operators.
func TestEvaluateNumericDateIP(t *testing.T) {
	const p = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"sts:AssumeRole","Resource":"*",
		"Condition":{"NumericLessThanEquals":{"aws:MultiFactorAuthAge":"3600"},
		             "DateGreaterThan":{"aws:CurrentTime":"2020-04-01T00:00:00Z"},
		             "IpAddress":{"aws:SourceIp":["203.0.113.0/24","2001:db8::/32"]}}}}`
	ok := []string{"aws:MultiFactorAuthAge", "600", "aws:CurrentTime", "2024-01-01T00:00:00Z", "aws:SourceIp", "203.0.113.7"}
	with := func(k, v string) Request {
		kv := append([]string(nil), ok...)
		for i := 0; i < len(kv); i += 2 {
			if kv[i] == k {
				kv[i+1] = v
			}
		}
		return req("sts:AssumeRole", "*", kv...)
	}
	runCases(t, []evalCase{
		{"all hold", p, req("sts:AssumeRole", "*", ok...), allow},
		{"number too big", p, with("aws:MultiFactorAuthAge", "7200"), implicit},
		{"date too early", p, with("aws:CurrentTime", "2019-01-01T00:00:00Z"), implicit},
		{"epoch date", p, with("aws:CurrentTime", "1700000000"), allow},
		{"IPv6 in range", p, with("aws:SourceIp", "2001:db8::1"), allow},
		{"IP out of range", p, with("aws:SourceIp", "198.51.100.1"), implicit},
	})
}

// Policy variables (IAM User Guide, "IAM policy elements: Variables and
// tags"): filled from the request, never wildcards themselves.
func TestEvaluateVariables(t *testing.T) {
	const home = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bucket/home/${aws:username}/*"}}`
	const old = `{"Version":"2008-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bucket/home/${aws:username}/*"}}`
	const literalStar = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bucket/${*}/x"}}`
	const tagged = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*",
		"Condition":{"StringEquals":{"aws:ResourceTag/owner":"${aws:username}"},"StringLike":{"aws:ResourceTag/team":"${aws:PrincipalTag/team, 'none'}"}}}}`
	runCases(t, []evalCase{
		{"own prefix", home, req("s3:GetObject", "arn:aws:s3:::bucket/home/alice/a.txt", "aws:username", "alice"), allow},
		{"another user's prefix", home, req("s3:GetObject", "arn:aws:s3:::bucket/home/bob/a.txt", "aws:username", "alice"), implicit},
		{"variable missing", home, req("s3:GetObject", "arn:aws:s3:::bucket/home/alice/a.txt"), implicit},
		{"a variable value is not a wildcard", home, req("s3:GetObject", "arn:aws:s3:::bucket/home/bob/a.txt", "aws:username", "*"), implicit},
		{"2008-10-17 has no variables", old, req("s3:GetObject", "arn:aws:s3:::bucket/home/alice/a.txt", "aws:username", "alice"), implicit},
		{"${*} is a literal star", literalStar, req("s3:GetObject", "arn:aws:s3:::bucket/*/x"), allow},
		{"${*} is not a wildcard", literalStar, req("s3:GetObject", "arn:aws:s3:::bucket/a/x"), implicit},
		{"condition variable and default", tagged, req("ec2:TerminateInstances", "*", "aws:username", "alice", "aws:ResourceTag/owner", "alice", "aws:ResourceTag/team", "none"), allow},
		{"condition variable mismatch", tagged, req("ec2:TerminateInstances", "*", "aws:username", "alice", "aws:ResourceTag/owner", "bob", "aws:ResourceTag/team", "none"), implicit},
	})
}

func TestDecisionNamesStatements(t *testing.T) {
	p := MustParse("p", []byte(`{"Version":"2012-10-17","Statement":[{"Sid":"A","Effect":"Allow","Action":"ec2:*","Resource":"*"},
		{"Sid":"D","Effect":"Deny","Action":"ec2:TerminateInstances","Resource":"*"}]}`))
	d := p.Evaluate(req("ec2:TerminateInstances", "*"))
	if len(d.Matched) != 2 || d.Matched[0].Sid != "A" || d.Matched[1].Sid != "D" || d.Matched[1].Effect != Deny || !d.ExplicitDeny || d.Allowed {
		t.Errorf("decision %+v", d)
	}
	if got := outcome(p.Without(1).Evaluate(req("ec2:TerminateInstances", "*"))); got != allow {
		t.Errorf("without the Deny: %s", got)
	}
	if got := outcome(Evaluate(nil, req("ec2:TerminateInstances", "*"))); got != implicit {
		t.Errorf("no policy: %s", got)
	}
}
