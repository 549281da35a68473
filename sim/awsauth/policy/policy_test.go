package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAcceptsTheGrammar(t *testing.T) {
	p, err := Parse("p", []byte(`{"Version":"2012-10-17","Id":"x","Statement":{"Effect":"Deny","NotAction":["s3:*"],"NotResource":"arn:aws:s3:::b/*",
		"Condition":{"Bool":{"aws:SecureTransport":false},"NumericLessThan":{"s3:max-keys":[10,"20"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Statements[0]
	if s.Effect != Deny || !s.NotAction || !s.NotResource || len(s.Conditions) != 2 {
		t.Fatalf("statement %+v", s)
	}
	if c := s.Conditions[0]; c.Operator != "Bool" || c.Values[0] != "false" {
		t.Errorf("Bool condition %+v", c)
	}
	if c := s.Conditions[1]; len(c.Values) != 2 || c.Values[0] != "10" {
		t.Errorf("numeric condition %+v", c)
	}
}

func TestParseRejectsWithFieldAndReason(t *testing.T) {
	for _, c := range []struct{ doc, field, reason string }{
		{`[]`, "(document)", "not a JSON object"},
		{`{"Statement":[]}`, "Statement", "empty list"},
		{`{"Version":"2012-10-17"}`, "Statement", "missing"},
		{`{"Version":"2020-01-01","Statement":{}}`, "Version", "must be"},
		{`{"Statment":[]}`, "Statment", "unknown top-level field"},
		{`{"Statement":{"Effect":"allow","Action":"s3:*","Resource":"*"}}`, "Statement[0].Effect", `must be "Allow" or "Deny"`},
		{`{"Statement":{"Sid":"X","Effect":"Allow","Resource":"*"}}`, `Statement[0] (Sid "X").Action`, "one of Action or NotAction is required"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","NotAction":"s3:Get*","Resource":"*"}}`, "Statement[0].Action", "both"},
		{`{"Statement":{"Effect":"Allow","Action":"GetObject","Resource":"*"}}`, "Statement[0].Action", "service:Action"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"bucket"}}`, "Statement[0].Resource", "neither"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":[]}}`, "Statement[0].Resource", "empty"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Principal":"*"}}`, "Statement[0].Principal", "identity-based"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Conditon":{}}}`, "Statement[0].Conditon", "unknown statement field"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEqual":{"a":"b"}}}}`, "Statement[0].Condition.StringEqual", "unknown condition operator"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"a":"b"}}}}`, "Condition.ForSomeValues:StringEquals", "unknown set operator"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"Null":{"a":"yes"}}}}`, "Condition.Null.a", `"true" or "false"`},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"NullIfExists":{"a":"true"}}}}`, "Condition.NullIfExists", "unknown condition operator"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"NumericEquals":{"a":"ten"}}}}`, "Condition.NumericEquals.a", "not a number"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"IpAddress":{"a":"300.1.1.1"}}}}`, "Condition.IpAddress.a", "not an IP"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"a":{"b":1}}}}}`, "Condition.StringEquals.a", "not a string"},
		{`{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{}}}}`, "Condition.StringEquals", "no condition keys"},
	} {
		_, err := Parse("file.json", []byte(c.doc))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *ParseError", c.doc, err)
			continue
		}
		if !strings.Contains(pe.Field, c.field) || !strings.Contains(pe.Reason, c.reason) || !strings.HasPrefix(err.Error(), "IAM policy file.json: ") {
			t.Errorf("%s: %q (field %q), want field %q and reason %q", c.doc, err, pe.Field, c.field, c.reason)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"", "", true}, {"*", "", true}, {"*", "abc", true}, {"a*c", "abbbc", true}, {"a*c", "abcd", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {`a\*c`, "a*c", true}, {`a\*c`, "abc", false},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false}, {`\\`, `\`, true},
	} {
		if got := globMatch(c.p, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

// FuzzParse: no document makes Parse or Evaluate panic.
func FuzzParse(f *testing.F) {
	f.Add(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"arn:aws:ec2:${aws:x}:*:*/*","Condition":{"ForAnyValue:StringLikeIfExists":{"k":["${k}*"]}}}}`, "arn:aws:ec2:r:1:i/x", "v")
	f.Fuzz(func(t *testing.T, doc, resource, value string) {
		p, err := Parse("fuzz", []byte(doc))
		if err != nil {
			return
		}
		p.Evaluate(Request{Action: "ec2:RunInstances", Resource: resource, Context: Context{"k": {value}, "aws:x": {value}}})
	})
}
