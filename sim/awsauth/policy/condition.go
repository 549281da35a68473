package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// setOp is a condition's set operator prefix.
type setOp int

const (
	single setOp = iota // no prefix
	forAll              // ForAllValues:
	forAny              // ForAnyValue:
)

// operator is a parsed condition operator name.
type operator struct {
	base     string // e.g. "StringLike", "Null"
	set      setOp
	ifExists bool
	negated  bool // the Not* operators: true when the key is absent
	match    func(policyValue, contextValue string) bool
}

// baseOperators are the operators the evaluator knows, with how one policy
// value matches one request value. Negated ones list their positive form.
var baseOperators = map[string]struct {
	negated bool
	match   func(p, c string) bool
}{
	"StringEquals":              {false, func(p, c string) bool { return p == c }},
	"StringNotEquals":           {true, func(p, c string) bool { return p == c }},
	"StringEqualsIgnoreCase":    {false, strings.EqualFold},
	"StringNotEqualsIgnoreCase": {true, strings.EqualFold},
	"StringLike":                {false, globMatch},
	"StringNotLike":             {true, globMatch},
	"ArnEquals":                 {false, arnMatch},
	"ArnLike":                   {false, arnMatch},
	"ArnNotEquals":              {true, arnMatch},
	"ArnNotLike":                {true, arnMatch},
	"Bool":                      {false, boolEquals},
	"NumericEquals":             {false, numeric(func(a, b float64) bool { return a == b })},
	"NumericNotEquals":          {true, numeric(func(a, b float64) bool { return a == b })},
	"NumericLessThan":           {false, numeric(func(p, c float64) bool { return c < p })},
	"NumericLessThanEquals":     {false, numeric(func(p, c float64) bool { return c <= p })},
	"NumericGreaterThan":        {false, numeric(func(p, c float64) bool { return c > p })},
	"NumericGreaterThanEquals":  {false, numeric(func(p, c float64) bool { return c >= p })},
	"DateEquals":                {false, date(func(p, c time.Time) bool { return c.Equal(p) })},
	"DateNotEquals":             {true, date(func(p, c time.Time) bool { return c.Equal(p) })},
	"DateLessThan":              {false, date(func(p, c time.Time) bool { return c.Before(p) })},
	"DateLessThanEquals":        {false, date(func(p, c time.Time) bool { return !c.After(p) })},
	"DateGreaterThan":           {false, date(func(p, c time.Time) bool { return c.After(p) })},
	"DateGreaterThanEquals":     {false, date(func(p, c time.Time) bool { return !c.Before(p) })},
	"IpAddress":                 {false, ipMatch},
	"NotIpAddress":              {true, ipMatch},
}

// parseOperator reads [ForAllValues:|ForAnyValue:]Base[IfExists] (set
// operator and base are case-insensitive in IAM; Null takes no IfExists).
func parseOperator(name string) (operator, error) {
	var op operator
	rest := name
	if prefix, base, ok := strings.Cut(name, ":"); ok {
		switch strings.ToLower(prefix) {
		case "forallvalues":
			op.set = forAll
		case "foranyvalue":
			op.set = forAny
		default:
			return op, fmt.Errorf("unknown set operator %q (ForAllValues or ForAnyValue)", prefix)
		}
		rest = base
	}
	if strings.EqualFold(rest, "Null") {
		if op.set != single {
			return op, fmt.Errorf("the Null operator takes no set operator")
		}
		op.base = "Null"
		return op, nil
	}
	if b, ok := strings.CutSuffix(rest, "IfExists"); ok {
		op.ifExists, rest = true, b
	}
	for base, def := range baseOperators {
		if strings.EqualFold(base, rest) {
			op.base, op.negated, op.match = base, def.negated, def.match
			return op, nil
		}
	}
	return op, fmt.Errorf("unknown condition operator %q", name)
}

// parseConditions reads a Condition block: operator -> key -> value(s).
// Values may be JSON strings, booleans or numbers, alone or in a list.
func parseConditions(raw json.RawMessage) ([]Condition, *ParseError) {
	var block map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil {
		return nil, &ParseError{Field: ".Condition", Reason: "must map operators to {key: value(s)}: " + err.Error()}
	}
	var out []Condition
	for opName, keys := range block {
		op, err := parseOperator(opName)
		if err != nil {
			return nil, &ParseError{Field: ".Condition." + opName, Reason: err.Error()}
		}
		if len(keys) == 0 {
			return nil, &ParseError{Field: ".Condition." + opName, Reason: "no condition keys"}
		}
		for key, v := range keys {
			vals, err := conditionValues(v)
			if err == nil {
				err = checkValues(op, vals)
			}
			if err != nil {
				return nil, &ParseError{Field: ".Condition." + opName + "." + key, Reason: err.Error()}
			}
			out = append(out, Condition{Operator: opName, Key: key, Values: vals, op: op})
		}
	}
	sortConditions(out)
	return out, nil
}

func conditionValues(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("empty value list")
		}
		var out []string
		for _, e := range list {
			s, err := scalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalar(raw)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

// scalar reads a JSON string, boolean or number as IAM compares it.
func scalar(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return strconv.FormatBool(b), nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("value %s is not a string, boolean or number", raw)
}

// checkValues rejects values the operator can never match, so a typo
// fails at load time rather than silently denying.
func checkValues(op operator, vals []string) error {
	for _, v := range vals {
		switch {
		case op.base == "Null" || op.base == "Bool":
			if v != "true" && v != "false" {
				return fmt.Errorf("%s takes \"true\" or \"false\", not %q", op.base, v)
			}
		case strings.HasPrefix(op.base, "Numeric") && !strings.Contains(v, "${"):
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
		case strings.HasPrefix(op.base, "Date") && !strings.Contains(v, "${"):
			if _, ok := parseDate(v); !ok {
				return fmt.Errorf("%q is not a date (RFC 3339 or epoch seconds)", v)
			}
		case strings.HasSuffix(op.base, "IpAddress"):
			if _, ok := parsePrefix(v); !ok {
				return fmt.Errorf("%q is not an IP address or CIDR", v)
			}
		}
	}
	return nil
}

func boolEquals(p, c string) bool { return strings.EqualFold(p, c) }

func numeric(cmp func(p, c float64) bool) func(p, c string) bool {
	return func(p, c string) bool {
		pf, err1 := strconv.ParseFloat(p, 64)
		cf, err2 := strconv.ParseFloat(c, 64)
		return err1 == nil && err2 == nil && cmp(pf, cf)
	}
}

func date(cmp func(p, c time.Time) bool) func(p, c string) bool {
	return func(p, c string) bool {
		pt, ok1 := parseDate(p)
		ct, ok2 := parseDate(c)
		return ok1 && ok2 && cmp(pt, ct)
	}
}

func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

func parsePrefix(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func ipMatch(p, c string) bool {
	pp, ok := parsePrefix(p)
	ca, err := netip.ParseAddr(c)
	return ok && err == nil && pp.Contains(ca)
}
