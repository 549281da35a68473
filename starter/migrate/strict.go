package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// unknownFields lists the paths of v's fields that t (a struct read by
// its json tags) has no field for, sorted. Values whose type decodes
// itself (quantities, durations, times) and interface{} accept anything;
// a value of the wrong kind is left to the typed decode.
func unknownFields(v interface{}, t reflect.Type) []string {
	var out []string
	walkFields(v, t, "", &out)
	sort.Strings(out)
	return out
}

func walkFields(v interface{}, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshaler) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]interface{})
		if !ok {
			return
		}
		fields := jsonFields(t)
		for k, sub := range m {
			ft, ok := fields[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			walkFields(sub, ft, join(path, k), out)
		}
	case reflect.Map:
		m, ok := v.(map[string]interface{})
		if !ok {
			return
		}
		for k, sub := range m {
			walkFields(sub, t.Elem(), fmt.Sprintf("%s[%s]", path, k), out)
		}
	case reflect.Slice:
		l, ok := v.([]interface{})
		if !ok {
			return
		}
		for i, sub := range l {
			walkFields(sub, t.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// jsonFields maps the JSON names of a struct's fields (inline embedded
// structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// decodeTyped decodes v into a new value of type t through JSON, as the
// API server reads a custom resource: a value of the wrong type is
// reported with its field's path ("" when the decoder names none). Fields t
// lacks are ignored here (unknownFields reports them).
func decodeTyped(v interface{}, t reflect.Type) (interface{}, string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	typed := reflect.New(t).Interface()
	err = json.Unmarshal(raw, typed)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return typed, "", nil
	case errors.As(err, &te):
		return nil, te.Field, fmt.Errorf("%s, not %s", article(te.Value), article(jsonKind(te.Type)))
	}
	return nil, "", err
}

// jsonKind names a Go type by the JSON value it takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
