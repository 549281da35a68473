package ec2

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// form wraps the decoded Query parameters of one request. EC2 Query lists are
// flattened: "Filter.1.Name", "Filter.1.Value.1", "InstanceId.2".
type form url.Values

func (f form) get(key string) string { return url.Values(f).Get(key) }

// indices returns the list positions present under prefix ("Filter" ->
// 1, 2, ...), sorted. Query lists start at 1; gaps are kept as sent.
func (f form) indices(prefix string) []int {
	seen := map[int]bool{}
	p := prefix + "."
	for k := range f {
		if !strings.HasPrefix(k, p) {
			continue
		}
		rest := k[len(p):]
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[:i]
		}
		if n, err := strconv.Atoi(rest); err == nil && n > 0 {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// strings returns the flattened string list under prefix ("InstanceId").
func (f form) strings(prefix string) []string {
	var out []string
	for _, i := range f.indices(prefix) {
		out = append(out, f.get(prefix+"."+strconv.Itoa(i)))
	}
	return out
}

// at joins a list prefix and a position: at("Filter", 2) = "Filter.2".
func at(prefix string, i int) string { return prefix + "." + strconv.Itoa(i) }

// filter is one EC2 Filter: a name and the values any of which may match
// (with * and ? wildcards).
type filter struct {
	Name   string
	Values []string
}

func (f form) filters() []filter {
	var out []filter
	for _, i := range f.indices("Filter") {
		p := at("Filter", i)
		out = append(out, filter{Name: f.get(p + ".Name"), Values: f.strings(p + ".Value")})
	}
	return out
}

// tags reads a flattened Tag list ("Tag.1.Key", "Tag.1.Value") under prefix.
func (f form) tags(prefix string) map[string]string {
	out := map[string]string{}
	for _, i := range f.indices(prefix) {
		p := at(prefix, i)
		out[f.get(p+".Key")] = f.get(p + ".Value")
	}
	return out
}

// intParam parses an optional integer parameter; ok is false when absent.
func (f form) intParam(key string) (n int, ok bool, err error) {
	s := f.get(key)
	if s == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(s)
	if err != nil {
		return 0, true, invalidParameter("Invalid value '%s' for %s", s, key)
	}
	return n, true, nil
}
