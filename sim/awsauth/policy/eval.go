package policy

import "strings"

// Context holds a request's condition keys and their values. Keys are
// case-insensitive, as in IAM ("aws:RequestTag/Team" = "AWS:requesttag/team"
// for lookup); a key with no values is absent.
type Context map[string][]string

// get looks a key up case-insensitively.
func (c Context) get(key string) ([]string, bool) {
	if vs, ok := c[key]; ok {
		return vs, len(vs) > 0
	}
	for k, vs := range c {
		if strings.EqualFold(k, key) {
			return vs, len(vs) > 0
		}
	}
	return nil, false
}

// Request is one authorization question: may the principal perform
// Action ("ec2:RunInstances") on Resource (an ARN, or "*" for actions
// without resource-level permissions) given Context?
type Request struct {
	Action   string
	Resource string
	Context  Context
}

// Match names a statement that applied to a request.
type Match struct {
	Policy string
	Sid    string // "" when the statement has none
	Index  int    // the statement's position in its policy
	Effect Effect
}

// Decision is the outcome of evaluating a request.
type Decision struct {
	Allowed bool
	// ExplicitDeny is set when a Deny statement applied (it wins over any
	// Allow); neither flag set is the implicit deny.
	ExplicitDeny bool
	// Matched are the statements that applied, Allow and Deny alike.
	Matched []Match
}

// Evaluate decides r against the identity-based policies together, as
// IAM does for one principal: an applicable Deny denies, else an
// applicable Allow allows, else the request is implicitly denied.
func Evaluate(policies []*Policy, r Request) Decision {
	var d Decision
	for _, p := range policies {
		for i, s := range p.Statements {
			if !s.applies(r) {
				continue
			}
			d.Matched = append(d.Matched, Match{Policy: p.Name, Sid: s.Sid, Index: i, Effect: s.Effect})
			if s.Effect == Deny {
				d.ExplicitDeny = true
			} else {
				d.Allowed = true
			}
		}
	}
	if d.ExplicitDeny {
		d.Allowed = false
	}
	return d
}

// Evaluate decides r against p alone.
func (p *Policy) Evaluate(r Request) Decision { return Evaluate([]*Policy{p}, r) }

// Without returns a copy of p without statement i (least-privilege tests).
func (p *Policy) Without(i int) *Policy {
	out := &Policy{Name: p.Name, Version: p.Version}
	out.Statements = append(append(out.Statements, p.Statements[:i]...), p.Statements[i+1:]...)
	return out
}

// applies reports whether the statement covers the request: its action,
// its resource, and every condition.
func (s Statement) applies(r Request) bool {
	return s.actionApplies(r.Action) && s.resourceApplies(r) && s.conditionsHold(r.Context)
}

func (s Statement) actionApplies(action string) bool {
	for _, p := range s.Actions {
		if actionMatch(p, action) {
			return !s.NotAction
		}
	}
	return s.NotAction
}

func (s Statement) resourceApplies(r Request) bool {
	for _, raw := range s.Resources {
		if raw == "*" {
			return !s.NotResource
		}
		p, ok := resolve(raw, r.Context, s.variables)
		if ok && arnMatch(p, r.Resource) {
			return !s.NotResource
		}
	}
	return s.NotResource
}

// conditionsHold: every operator/key pair holds (AND); within one, any
// policy value may match (OR).
func (s Statement) conditionsHold(ctx Context) bool {
	for _, c := range s.Conditions {
		if !c.holds(ctx, s.variables) {
			return false
		}
	}
	return true
}

func (c Condition) holds(ctx Context, vars bool) bool {
	values, present := ctx.get(c.Key)
	if c.op.base == "Null" {
		for _, v := range c.Values {
			if (v == "true") != present {
				return true
			}
		}
		return false
	}
	if !present && c.op.ifExists {
		return true
	}
	patterns := c.resolved(ctx, vars)
	switch c.op.set {
	case forAll:
		// True when every request value matches; vacuously true when the
		// key is absent or empty.
		for _, v := range values {
			if !c.valueHolds(patterns, v) {
				return false
			}
		}
		return true
	case forAny:
		for _, v := range values {
			if c.valueHolds(patterns, v) {
				return true
			}
		}
		return false
	}
	if !present {
		return c.op.negated // an absent key matches no value
	}
	if c.op.negated {
		for _, v := range values {
			if !c.valueHolds(patterns, v) {
				return false
			}
		}
		return true
	}
	for _, v := range values {
		if c.valueHolds(patterns, v) {
			return true
		}
	}
	return false
}

// valueHolds: one request value satisfies the operator against the
// policy values (for a negated operator: it matches none of them).
func (c Condition) valueHolds(patterns []string, v string) bool {
	for _, p := range patterns {
		if c.op.match(p, v) {
			return !c.op.negated
		}
	}
	return c.op.negated
}

// resolved are the condition's values with policy variables filled in; the
// wildcard operators keep the escaped pattern, the others compare text.
func (c Condition) resolved(ctx Context, vars bool) []string {
	glob := c.op.base == "StringLike" || c.op.base == "StringNotLike" || strings.HasPrefix(c.op.base, "Arn")
	out := make([]string, 0, len(c.Values))
	for _, raw := range c.Values {
		p, ok := resolve(raw, ctx, vars)
		if !ok {
			continue
		}
		if !glob {
			p = unescape(p)
		}
		out = append(out, p)
	}
	return out
}
