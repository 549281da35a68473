package v1

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestEveryKarpenterFieldDecodes: every field path of Karpenter v1.15's
// NodePool, NodeClaim and EC2NodeClass schemas (testdata, extracted from
// Karpenter's CRDs) names a field of our types, so strict decoding never
// fails on valid Karpenter YAML.
func TestEveryKarpenterFieldDecodes(t *testing.T) {
	f, err := os.Open("testdata/karpenter-v1.15-fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	roots := map[string]reflect.Type{
		"NodePool": reflect.TypeOf(NodePool{}), "NodeClaim": reflect.TypeOf(NodeClaim{}), "EC2NodeClass": reflect.TypeOf(EC2NodeClass{}),
	}
	var root reflect.Type
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "["):
			root = roots[strings.Trim(line, "[]")]
			continue
		}
		if root == nil {
			t.Fatalf("path %q before a kind", line)
		}
		if why := resolve(root, strings.Split(line, ".")); why != "" {
			t.Errorf("%s %s: %s", root.Name(), line, why)
		}
		n++
	}
	if n < 175 {
		t.Fatalf("only %d paths read", n)
	}
}

// resolve walks a JSON field path ("a.b[].c") through a Go type by json
// tags; it returns why it cannot ("" when it can).
func resolve(t reflect.Type, path []string) string {
	for _, seg := range path {
		list := strings.HasSuffix(seg, "[]")
		seg = strings.TrimSuffix(seg, "[]")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "no field " + seg + " in " + t.String()
		}
		f, ok := jsonField(t, seg)
		if !ok {
			return "no field " + seg + " in " + t.String()
		}
		t = f
		if list {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice {
				return seg + " is not a list"
			}
			t = t.Elem()
		}
	}
	return ""
}

func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f.Type, true
		}
		if f.Anonymous && tag == "" {
			if ft, ok := jsonField(f.Type, name); ok {
				return ft, true
			}
		}
	}
	return nil, false
}
