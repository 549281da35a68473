package awsauth

import (
	"maps"
	"slices"
	"strings"

	"github.com/joinery/joinery/sim/awsauth/policy"
)

// StatementProof is the least-privilege evidence for one statement of a
// policy, from recorded checks the policy allowed.
type StatementProof struct {
	Index int
	Sid   string
	// Needed is a recorded check the policy allows and the policy without
	// this statement refuses; nil: no recorded call needs the statement.
	Needed *Check
	// Tight and Loose are the statement's scopings (a condition key, or a
	// resource pattern naming the cluster, region, account, role or queue)
	// that a request for another cluster's resources does or does not
	// run into: the whole policy refuses (Tight) or still allows (Loose) a
	// recorded request the statement allowed, rewritten for elsewhere.
	Tight, Loose []string
	// Unproven are scopings no recorded call the statement allowed could
	// be rewritten for (the calls recorded never used them).
	Unproven []string
	// Unused are the statement's actions, resource patterns and condition
	// values no recorded call it allowed used (a finer grain than Needed).
	Unused []string
}

// LeastPrivilege proves each statement of p needed and scoped, against the
// recorded checks. others rewrites this world's values (cluster name,
// region, account, node role, queue) into another world's: a condition's
// value (or a key naming the cluster) is rewritten, a condition without
// such a value loses its key, a resource has its values rewritten.
func LeastPrivilege(p *policy.Policy, checks []Check, others map[string]string) []StatementProof {
	var allowed []Check
	for _, c := range checks {
		if p.Evaluate(policy.Request(c)).Allowed {
			allowed = append(allowed, c)
		}
	}
	out := make([]StatementProof, len(p.Statements))
	for i, s := range p.Statements {
		out[i] = StatementProof{Index: i, Sid: s.Sid}
		without := p.Without(i)
		for _, c := range allowed {
			if !without.Evaluate(policy.Request(c)).Allowed {
				c := c
				out[i].Needed = &c
				break
			}
		}
		matched := matchedBy(p, i, allowed)
		out[i].Unused = unused(s, matched)
		for _, cond := range s.Conditions {
			out[i].record(cond.Operator+" "+cond.Key, p, mutateCondition(matched, cond, others))
		}
		for _, r := range s.Resources {
			if containsAny(r, others) {
				out[i].record("Resource "+r, p, mutateResource(matched, r, others))
			}
		}
	}
	return out
}

// record files the scoping as Tight when the rewritten check (if any
// recorded check could be rewritten) is refused.
func (sp *StatementProof) record(what string, p *policy.Policy, c *Check) {
	switch {
	case c == nil:
		sp.Unproven = append(sp.Unproven, what)
	case p.Evaluate(policy.Request(*c)).Allowed:
		sp.Loose = append(sp.Loose, what+": still allowed for "+c.Action+" on "+c.Resource)
	default:
		sp.Tight = append(sp.Tight, what)
	}
}

// unused lists what of the statement no matched check used.
func unused(s policy.Statement, matched []Check) []string {
	var out []string
	used := func(pred func(Check) bool) bool { return slices.ContainsFunc(matched, pred) }
	for _, a := range s.Actions {
		if !s.NotAction && !used(func(c Check) bool { return policy.MatchAction(a, c.Action) }) {
			out = append(out, "Action "+a)
		}
	}
	for _, r := range s.Resources {
		if !s.NotResource && !used(func(c Check) bool { return policy.MatchResource(r, c.Resource) }) {
			out = append(out, "Resource "+r)
		}
	}
	for _, cond := range s.Conditions {
		if len(cond.Values) < 2 || strings.Contains(cond.Operator, "Not") {
			continue
		}
		for _, v := range cond.Values {
			if !used(func(c Check) bool {
				_, vals, _ := lookup(c.Context, cond.Key)
				return slices.ContainsFunc(vals, func(cv string) bool { return cond.Matches(v, cv) })
			}) {
				out = append(out, cond.Operator+" "+cond.Key+" "+v)
			}
		}
	}
	return out
}

// matchedBy are the allowed checks statement i applies to.
func matchedBy(p *policy.Policy, i int, checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		for _, m := range p.Evaluate(policy.Request(c)).Matched {
			if m.Index == i {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// mutateCondition rewrites the first matched check that has the
// condition's key.
func mutateCondition(matched []Check, cond policy.Condition, others map[string]string) *Check {
	for _, c := range matched {
		key, vals, ok := lookup(c.Context, cond.Key)
		if !ok {
			continue
		}
		ctx := policy.Context{}
		for k, v := range c.Context {
			ctx[k] = v
		}
		delete(ctx, key)
		switch {
		case strings.HasPrefix(cond.Operator, "ForAllValues:"):
			// A set condition bounds the request's values (e.g. the tag
			// keys): one value more is what it must refuse.
			ctx[key] = append(slices.Clone(vals), "elsewhere/unlisted")
		case containsAny(cond.Key, others):
			ctx[rewrite(key, others)] = vals // another cluster's tag key
		case anyContains(cond.Values, others):
			ctx[key] = rewriteAll(vals, others)
		}
		c.Context = ctx
		return &c
	}
	return nil
}

func mutateResource(matched []Check, pattern string, others map[string]string) *Check {
	for _, c := range matched {
		if policy.MatchResource(pattern, c.Resource) {
			c.Resource = rewrite(c.Resource, others)
			return &c
		}
	}
	return nil
}

func lookup(ctx policy.Context, key string) (string, []string, bool) {
	for k, v := range ctx {
		if strings.EqualFold(k, key) && len(v) > 0 {
			return k, v, true
		}
	}
	return "", nil, false
}

func containsAny(s string, others map[string]string) bool { return rewrite(s, others) != s }

func anyContains(vals []string, others map[string]string) bool {
	for _, v := range vals {
		if containsAny(v, others) {
			return true
		}
	}
	return false
}

// rewrite replaces this world's values, longest first (one may contain
// another).
func rewrite(s string, others map[string]string) string {
	froms := slices.Collect(maps.Keys(others))
	slices.SortFunc(froms, func(a, b string) int { return len(b) - len(a) })
	for _, from := range froms {
		s = strings.ReplaceAll(s, from, others[from])
	}
	return s
}

func rewriteAll(vals []string, others map[string]string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = rewrite(v, others)
	}
	return out
}
