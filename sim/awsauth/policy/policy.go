// Package policy parses IAM identity-based policy documents and evaluates
// requests against them as AWS does: an explicit Deny wins over any Allow,
// an Allow over the implicit deny; Action/NotAction and Resource/NotResource
// with wildcards; Condition blocks with the string, ARN, Bool, Null,
// numeric, date and IP operators, their IfExists forms and the
// ForAllValues:/ForAnyValue: set operators; IAM policy variables
// (${aws:username}, ${*}) in resources and condition values.
//
// It is pure: no HTTP, no clock, no I/O. The local world's endpoints
// (sim/awsauth) build a Request per resource a call touches and ask
// Evaluate. References: AWS IAM User Guide, "Policy evaluation logic",
// "IAM JSON policy elements: Condition operators", "Policy variables".
package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Effect is a statement's Effect.
type Effect string

// The two effects.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Policy is a parsed identity-based policy document.
type Policy struct {
	// Name labels the policy in decisions (e.g. "deploy/iam-policy.json").
	Name       string
	Version    string
	Statements []Statement
}

// Statement is one statement. Exactly one of Actions/NotActions and one of
// Resources/NotResources is set (the Not* flag says which).
type Statement struct {
	Sid         string
	Effect      Effect
	Actions     []string // lower-cased "service:action" patterns
	NotAction   bool
	Resources   []string
	NotResource bool
	Conditions  []Condition // sorted by operator, then key
	// variables: ${...} in resources and condition values are policy
	// variables (Version 2012-10-17); otherwise they are literal text.
	variables bool
}

// Condition is one operator/key pair of a Condition block with its values.
type Condition struct {
	Operator string // as written, e.g. "ForAllValues:StringEquals"
	Key      string // as written, e.g. "aws:RequestTag/joinery.sh/cluster"
	Values   []string
	op       operator
}

// ParseError says which field of which statement is wrong and why.
type ParseError struct {
	Policy string // the policy's name
	Field  string // e.g. `Statement[2] (Sid "PassNodeRole").Condition.StringEquals`
	Reason string
}

func (e *ParseError) Error() string {
	where := e.Field
	if e.Policy != "" {
		where = e.Policy + ": " + where
	}
	return "IAM policy " + where + ": " + e.Reason
}

// Parse reads a policy document strictly: an unknown field, a missing or
// misspelled Effect, both Action and NotAction, an unknown condition
// operator or a Principal (not allowed in an identity-based policy) is a
// *ParseError naming the field and the reason. name labels the policy.
func Parse(name string, doc []byte) (*Policy, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, &ParseError{Policy: name, Field: "(document)", Reason: "not a JSON object: " + err.Error()}
	}
	p := &Policy{Name: name, Version: "2008-10-17"}
	for k, v := range raw {
		switch k {
		case "Version":
			if err := json.Unmarshal(v, &p.Version); err != nil || (p.Version != "2012-10-17" && p.Version != "2008-10-17") {
				return nil, &ParseError{name, "Version", "must be \"2012-10-17\" or \"2008-10-17\", not " + string(v)}
			}
		case "Id":
		case "Statement":
		default:
			return nil, &ParseError{name, k, "unknown top-level field"}
		}
	}
	stmts, err := statementList(raw["Statement"])
	if err != nil {
		return nil, &ParseError{name, "Statement", err.Error()}
	}
	for i, s := range stmts {
		st, perr := parseStatement(s, p.Version)
		if perr != nil {
			perr.Policy, perr.Field = name, statementField(i, s)+perr.Field
			return nil, perr
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

// MustParse is Parse for documents known to be valid (tests, allow-all).
func MustParse(name string, doc []byte) *Policy {
	p, err := Parse(name, doc)
	if err != nil {
		panic(err)
	}
	return p
}

// AllowAll is a policy granting every action on every resource (the
// local world's admin identity).
func AllowAll(name string) *Policy {
	return MustParse(name, []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`))
}

func statementField(i int, s map[string]json.RawMessage) string {
	var sid string
	_ = json.Unmarshal(s["Sid"], &sid)
	if sid != "" {
		return fmt.Sprintf("Statement[%d] (Sid %q)", i, sid)
	}
	return fmt.Sprintf("Statement[%d]", i)
}

// statementList accepts one statement object or a list of them.
func statementList(b json.RawMessage) ([]map[string]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("missing")
	}
	if b[0] == '{' {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(b, &one); err != nil {
			return nil, err
		}
		return []map[string]json.RawMessage{one}, nil
	}
	var many []map[string]json.RawMessage
	if err := json.Unmarshal(b, &many); err != nil {
		return nil, fmt.Errorf("must be an object or a list of objects: %v", err)
	}
	if len(many) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return many, nil
}

func parseStatement(s map[string]json.RawMessage, version string) (Statement, *ParseError) {
	st := Statement{variables: version == "2012-10-17"}
	fail := func(field, format string, args ...any) (Statement, *ParseError) {
		return st, &ParseError{Field: "." + field, Reason: fmt.Sprintf(format, args...)}
	}
	for k := range s {
		switch k {
		case "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition":
		case "Principal", "NotPrincipal":
			return fail(k, "not allowed in an identity-based policy")
		default:
			return fail(k, "unknown statement field")
		}
	}
	if raw, ok := s["Sid"]; ok {
		if err := json.Unmarshal(raw, &st.Sid); err != nil {
			return fail("Sid", "must be a string")
		}
	}
	var effect string
	if err := json.Unmarshal(s["Effect"], &effect); err != nil || (effect != string(Allow) && effect != string(Deny)) {
		return fail("Effect", "must be \"Allow\" or \"Deny\", not %s", orMissing(s["Effect"]))
	}
	st.Effect = Effect(effect)
	var err error
	if st.Actions, st.NotAction, err = pair(s, "Action", "NotAction", checkAction); err != nil {
		return fail(err.(*fieldError).field, "%s", err.(*fieldError).reason)
	}
	for i := range st.Actions {
		st.Actions[i] = strings.ToLower(st.Actions[i])
	}
	if st.Resources, st.NotResource, err = pair(s, "Resource", "NotResource", checkResource); err != nil {
		return fail(err.(*fieldError).field, "%s", err.(*fieldError).reason)
	}
	if raw, ok := s["Condition"]; ok {
		conds, perr := parseConditions(raw)
		if perr != nil {
			return st, perr
		}
		st.Conditions = conds
	}
	return st, nil
}

type fieldError struct{ field, reason string }

func (e *fieldError) Error() string { return e.field + ": " + e.reason }

// pair reads exactly one of the two fields (e.g. Action / NotAction) as a
// string or a list of strings, each checked.
func pair(s map[string]json.RawMessage, name, notName string, check func(string) string) ([]string, bool, error) {
	raw, has := s[name]
	notRaw, hasNot := s[notName]
	switch {
	case has && hasNot:
		return nil, false, &fieldError{name, "both " + name + " and " + notName + " are set"}
	case !has && !hasNot:
		return nil, false, &fieldError{name, "one of " + name + " or " + notName + " is required"}
	case hasNot:
		name, raw = notName, notRaw
	}
	vals, err := stringOrList(raw)
	if err != nil {
		return nil, false, &fieldError{name, err.Error()}
	}
	if len(vals) == 0 {
		return nil, false, &fieldError{name, "empty"}
	}
	for _, v := range vals {
		if why := check(v); why != "" {
			return nil, false, &fieldError{name, fmt.Sprintf("%q: %s", v, why)}
		}
	}
	return vals, hasNot, nil
}

func checkAction(a string) string {
	if a == "*" {
		return ""
	}
	svc, act, ok := strings.Cut(a, ":")
	if !ok || svc == "" || act == "" || strings.ContainsAny(svc, "*?") {
		return "not of the form service:Action"
	}
	return ""
}

func checkResource(r string) string {
	if r == "*" {
		return ""
	}
	if !strings.HasPrefix(r, "arn:") || strings.Count(r, ":") < 5 {
		return "neither \"*\" nor an ARN (arn:partition:service:region:account:resource)"
	}
	return ""
}

// stringOrList reads "x" or ["x", "y"].
func stringOrList(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("must be a string or a list of strings")
	}
	return many, nil
}

func orMissing(b json.RawMessage) string {
	if len(b) == 0 {
		return "missing"
	}
	return string(b)
}

// sortConditions orders a statement's conditions (operator, then key) so
// decisions and errors read the same every run.
func sortConditions(cs []Condition) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Operator != cs[j].Operator {
			return cs[i].Operator < cs[j].Operator
		}
		return cs[i].Key < cs[j].Key
	})
}
