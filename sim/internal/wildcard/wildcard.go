// Package wildcard matches the wildcard patterns AWS takes: IAM policy
// patterns (sim/awsauth/policy) and EC2 filter values (sim/ec2).
package wildcard

// Match reports whether s matches the pattern p: '*' is any run, '?' one
// element, and a backslash makes the next element literal. The element
// is the caller's unit: bytes for IAM, runes (characters) for EC2.
// Iterative, with one backtrack point, so no input makes it slow.
func Match[E byte | rune](p, s []E) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && p[pi] == '?':
			pi++
			si++
		case pi+1 < len(p) && p[pi] == '\\' && p[pi+1] == s[si]:
			pi += 2
			si++
		case pi < len(p) && p[pi] != '\\' && p[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
