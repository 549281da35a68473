package wildcard

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s         string
		bytes, runes bool
	}{
		{"", "", true, true}, {"*", "", true, true}, {"*", "abc", true, true}, {"a*c", "abbbc", true, true},
		{"a*c", "abcd", false, false}, {"a?c", "abc", true, true}, {"a?c", "ac", false, false},
		{`a\*c`, "a*c", true, true}, {`a\*c`, "abc", false, false}, {`\\`, `\`, true, true}, {`a\`, "a", false, false},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false, false},
		// '?' is one byte for IAM, one character for EC2.
		{"?", "é", false, true}, {"??", "é", true, false}, {"*é", "café", true, true},
	} {
		if got := Match([]byte(c.p), []byte(c.s)); got != c.bytes {
			t.Errorf("bytes: Match(%q, %q) = %v", c.p, c.s, got)
		}
		if got := Match([]rune(c.p), []rune(c.s)); got != c.runes {
			t.Errorf("runes: Match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}
