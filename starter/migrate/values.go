package migrate

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// get is the value at a path of nested maps (nil when absent).
func get(m map[string]interface{}, path ...string) interface{} {
	var v interface{} = m
	for _, k := range path {
		mm, ok := v.(map[string]interface{})
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// ensure is the map at a path, made (replacing any non-map) where absent.
func ensure(m map[string]interface{}, path ...string) map[string]interface{} {
	for _, k := range path {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	return m
}

func str(v interface{}) string {
	s, _ := v.(string)
	return s
}

func deepCopy(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []interface{}:
		l := make([]interface{}, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// show writes a value as flow YAML, keys sorted: {group: karpenter.k8s.aws,
// kind: EC2NodeClass, name: default}.
func show(v interface{}) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case marker:
		return string(t)
	case string:
		if t == "" {
			return `""`
		}
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case map[string]interface{}:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + show(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []interface{}:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = show(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// brief is show cut to a readable length.
func brief(v interface{}) string {
	s := show(v)
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// fieldExists reports whether a field path ("spec.budgets[0].reasons")
// names a field of t by its json tags.
func fieldExists(t reflect.Type, path string) bool {
	for _, seg := range splitPath(path) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		ft, ok := jsonFields(t)[seg]
		if !ok {
			return false
		}
		t = ft
	}
	return true
}

// splitPath splits a field path into its field names, dropping [index]
// and [key] parts (keys may hold dots).
func splitPath(path string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth > 0:
		case r == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(out, cur.String())
}
