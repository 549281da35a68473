package awsauth

import (
	"encoding/base64"
	"encoding/json"
	"sort"

	"github.com/joinery/joinery/sim/awsauth/policy"
)

// Kind says why a request was refused.
type Kind int

// The kinds of refusal, each answered with the service's own error code.
const (
	MissingAuthentication Kind = iota // no Authorization header
	IncompleteSignature               // malformed header, wrong scope or date
	UnknownAccessKey                  // the access key is not the world's
	SignatureMismatch                 // the signature does not verify
	SignatureExpired                  // X-Amz-Date more than 15 minutes off
	Denied                            // authenticated, but the policy does not allow it
)

// Failure is a refused request.
type Failure struct {
	Kind Kind
	// Message is the service-neutral text: for Denied, "User: <arn> is not
	// authorized to perform: <action> on resource: <arn> because no
	// identity-based policy allows the <action> action" (or "with an
	// explicit deny in an identity-based policy").
	Message string
	// AccessKeyID is the unknown key (UnknownAccessKey).
	AccessKeyID string
	// Denied: the caller, the refused check and its decision.
	Principal, PrincipalName string
	Check                    Check
	Decision                 policy.Decision
}

func (f *Failure) Error() string { return f.Message }

func (f *Failure) deniedMessage() string {
	msg := "User: " + f.Principal + " is not authorized to perform: " + f.Check.Action + " on resource: " + f.Check.Resource
	if f.Decision.ExplicitDeny {
		return msg + " with an explicit deny in an identity-based policy"
	}
	return msg + " because no identity-based policy allows the " + f.Check.Action + " action"
}

// EC2Message is the message of EC2's UnauthorizedOperation: AWS's fixed
// sentence, the reason, and the encoded authorization failure message.
func (f *Failure) EC2Message() string {
	return "You are not authorized to perform this operation. " + f.Message + ". Encoded authorization failure message: " + f.Encoded()
}

// decodedMessage is the JSON behind Encoded, in the shape of
// sts:DecodeAuthorizationMessage's answer.
type decodedMessage struct {
	Allowed           bool            `json:"allowed"`
	ExplicitDeny      bool            `json:"explicitDeny"`
	MatchedStatements items[matched]  `json:"matchedStatements"`
	Failures          items[struct{}] `json:"failures"`
	Context           struct {
		Principal struct {
			ID  string `json:"id"`
			ARN string `json:"arn"`
		} `json:"principal"`
		Action     string           `json:"action"`
		Resource   string           `json:"resource"`
		Conditions items[condition] `json:"conditions"`
	} `json:"context"`
}

type items[T any] struct {
	Items []T `json:"items"`
}

type matched struct {
	StatementID string `json:"statementId"`
	Effect      string `json:"effect"`
	Policy      string `json:"policy"`
}

type condition struct {
	Key    string       `json:"key"`
	Values items[value] `json:"values"`
}

type value struct {
	Value string `json:"value"`
}

// Encoded is the "Encoded authorization failure message": base64 (std) of
// the decision as JSON, with the request's condition keys sorted.
func (f *Failure) Encoded() string {
	var m decodedMessage
	m.Allowed, m.ExplicitDeny = f.Decision.Allowed, f.Decision.ExplicitDeny
	m.MatchedStatements.Items = []matched{}
	m.Failures.Items = []struct{}{}
	for _, s := range f.Decision.Matched {
		m.MatchedStatements.Items = append(m.MatchedStatements.Items, matched{StatementID: s.Sid, Effect: string(s.Effect), Policy: s.Policy})
	}
	m.Context.Principal.ID, m.Context.Principal.ARN = f.PrincipalName, f.Principal
	m.Context.Action, m.Context.Resource = f.Check.Action, f.Check.Resource
	keys := make([]string, 0, len(f.Check.Context))
	for k := range f.Check.Context {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m.Context.Conditions.Items = []condition{}
	for _, k := range keys {
		c := condition{Key: k}
		for _, v := range f.Check.Context[k] {
			c.Values.Items = append(c.Values.Items, value{v})
		}
		m.Context.Conditions.Items = append(m.Context.Conditions.Items, c)
	}
	b, _ := json.Marshal(m)
	return base64.StdEncoding.EncodeToString(b)
}
