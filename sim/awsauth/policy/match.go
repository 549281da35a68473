package policy

import (
	"strings"

	"github.com/joinery/joinery/sim/internal/wildcard"
)

// Patterns are matched after policy variables are resolved into an escaped
// form: '*' and '?' are wildcards, "\x" is the literal character x. Text
// that came from a variable (or ${*}, ${?}, ${$}) is always escaped, so a
// tag value holding '*' never acts as a wildcard.

// resolve substitutes the policy variables of raw from ctx (when vars)
// and returns the escaped pattern; ok is false when a variable has no
// single value in the request and no default (the element then matches
// nothing, as in IAM).
func resolve(raw string, ctx Context, vars bool) (pattern string, ok bool) {
	var b strings.Builder
	for {
		i := strings.Index(raw, "${")
		if !vars || i < 0 {
			b.WriteString(escapeBackslash(raw))
			return b.String(), true
		}
		j := strings.IndexByte(raw[i:], '}')
		if j < 0 {
			b.WriteString(escapeBackslash(raw))
			return b.String(), true
		}
		b.WriteString(escapeBackslash(raw[:i]))
		val, found := variable(raw[i+2:i+j], ctx)
		if !found {
			return "", false
		}
		b.WriteString(escapeAll(val))
		raw = raw[i+j+1:]
	}
}

// variable is the value of one ${...}: a special character, a single-valued
// context key, or the default after a comma (${key, 'default'}).
func variable(expr string, ctx Context) (string, bool) {
	switch expr {
	case "*", "?", "$":
		return expr, true
	}
	key, def, hasDef := strings.Cut(expr, ",")
	if vs, ok := ctx.get(strings.TrimSpace(key)); ok && len(vs) == 1 {
		return vs[0], true
	}
	if hasDef {
		def = strings.TrimSpace(def)
		if len(def) >= 2 && def[0] == '\'' && def[len(def)-1] == '\'' {
			return def[1 : len(def)-1], true
		}
	}
	return "", false
}

func escapeBackslash(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }

func escapeAll(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`).Replace(s)
}

// unescape turns a resolved pattern back into plain text (for the
// equality operators, where '*' is an ordinary character).
func unescape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// globMatch reports whether s matches the escaped pattern p ('*' any run,
// '?' one byte, "\x" a literal x).
func globMatch(p, s string) bool { return wildcard.Match([]byte(p), []byte(s)) }

// arnMatch matches an ARN against an escaped ARN pattern component by
// component (partition, service, region, account, resource), each with
// its own wildcards, as IAM matches Resource and the Arn* operators. A
// pattern or value that is not an ARN is matched as a whole.
func arnMatch(p, s string) bool {
	pp := strings.SplitN(p, ":", 6)
	sp := strings.SplitN(s, ":", 6)
	if len(pp) != 6 || len(sp) != 6 {
		return globMatch(p, s)
	}
	for i := range pp {
		if !globMatch(pp[i], sp[i]) {
			return false
		}
	}
	return true
}

// actionMatch matches a request action ("ec2:RunInstances") against a
// lower-cased action pattern, case-insensitively.
func actionMatch(pattern, action string) bool {
	return globMatch(pattern, strings.ToLower(action))
}

// MatchResource reports whether an ARN matches a Resource pattern (no
// policy variables), as a statement's Resource element matches.
func MatchResource(pattern, arn string) bool {
	if pattern == "*" {
		return true
	}
	p, _ := resolve(pattern, nil, false)
	return arnMatch(p, arn)
}

// MatchAction reports whether an action ("ec2:RunInstances") matches an
// Action pattern, case-insensitively.
func MatchAction(pattern, action string) bool { return actionMatch(strings.ToLower(pattern), action) }

// Matches reports whether one policy value of the condition matches one
// request value under its operator (false for Null).
func (c Condition) Matches(policyValue, requestValue string) bool {
	return c.op.match != nil && c.op.match(policyValue, requestValue)
}
