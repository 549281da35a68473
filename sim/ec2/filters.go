package ec2

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/joinery/joinery/sim/internal/wildcard"
)

// fields maps a filter name to the values an item has for it.
type fields[T any] map[string]func(T) []string

// applyFilters keeps the items that match every filter: a filter matches
// when any of the item's values for it matches any of the filter's values
// (EC2 semantics: AND across filters, OR within one). Filter names
// "tag:<key>" and "tag-key" are handled through tagsOf. An unknown filter
// name is InvalidParameterValue, as EC2 answers.
func applyFilters[T any](items []T, filters []filter, fs fields[T], tagsOf func(T) map[string]string) ([]T, error) {
	getters := make([]func(T) []string, len(filters))
	for i, f := range filters {
		switch {
		case strings.HasPrefix(f.Name, "tag:") && tagsOf != nil:
			key := strings.TrimPrefix(f.Name, "tag:")
			getters[i] = func(t T) []string {
				if v, ok := tagsOf(t)[key]; ok {
					return []string{v}
				}
				return nil
			}
		case f.Name == "tag-key" && tagsOf != nil:
			getters[i] = func(t T) []string {
				var keys []string
				for k := range tagsOf(t) {
					keys = append(keys, k)
				}
				return keys
			}
		default:
			g, ok := fs[f.Name]
			if !ok {
				return nil, invalidParameter("The filter '%s' is invalid", f.Name)
			}
			getters[i] = g
		}
	}
	var out []T
	for _, it := range items {
		ok := true
		for i, f := range filters {
			if !matchAny(f.Values, getters[i](it)) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}

func matchAny(patterns, values []string) bool {
	for _, p := range patterns {
		for _, v := range values {
			if glob(p, v) {
				return true
			}
		}
	}
	return false
}

// glob matches s against an EC2 filter value: * is any run of characters, ?
// is one character, and a backslash escapes the next character.
func glob(pattern, s string) bool { return wildcard.Match([]rune(pattern), []rune(s)) }

// filterPage applies the request's filters (tagsOf nil: no tag filters),
// then returns the page its MaxResults and NextToken ask for (page).
func filterPage[T any](f form, items []T, fs fields[T], tagsOf func(T) map[string]string, key func(T) uint64, kind string, def, lo, hi int) ([]T, string, error) {
	items, err := applyFilters(items, f.filters(), fs, tagsOf)
	if err != nil {
		return nil, "", err
	}
	max, _, err := f.intParam("MaxResults")
	if err != nil {
		return nil, "", err
	}
	return page(items, key, kind, f.get("NextToken"), max, def, lo, hi)
}

// page returns one page of items (sorted by key, ascending) and the
// NextToken for the rest ("" on the last page). The token names the key of
// the first item of the next page, so items added or pruned between calls do
// not shift pages. max is the page size asked for (0: def; def 0: all);
// it must lie in [lo, hi] as EC2 requires.
func page[T any](items []T, key func(T) uint64, kind, token string, max, def, lo, hi int) ([]T, string, error) {
	if max == 0 {
		max = def
	} else if max < lo || max > hi {
		return nil, "", invalidParameter("Value ( %d ) for parameter maxResults is invalid. Expecting a value between %d and %d.", max, lo, hi)
	}
	start := 0
	if token != "" {
		from, err := decodeToken(kind, token)
		if err != nil {
			return nil, "", err
		}
		start = len(items)
		for i, it := range items {
			if key(it) >= from {
				start = i
				break
			}
		}
	}
	items = items[start:]
	if max <= 0 || len(items) <= max {
		return items, "", nil
	}
	return items[:max], encodeToken(kind, key(items[max])), nil
}

func encodeToken(kind string, key uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatUint(key, 10)))
}

func decodeToken(kind, token string) (uint64, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), kind+":"); ok {
			if n, err := strconv.ParseUint(rest, 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return 0, invalidParameter("Invalid NextToken: %s", token)
}

// maxFilterValues is how many filter values EC2 takes in one call, all
// the call's filters together.
const maxFilterValues = 200

// filterLimit is the FilterLimitExceeded EC2 answers a call with more
// filter values than it takes (nil when within the limit).
func filterLimit(f form) *apiError {
	n := 0
	for _, fl := range f.filters() {
		n += len(fl.Values)
	}
	if n > maxFilterValues {
		return newError(http.StatusBadRequest, CodeFilterLimitExceeded,
			"The maximum number of filter values specified on a single call is %d", maxFilterValues)
	}
	return nil
}
