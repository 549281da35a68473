package disruption

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// karpenter.sh/do-not-disrupt on a pod, as Karpenter v1.12+ reads it:
// "true" for good, a positive duration from the pod's start, anything else
// ignored (and reported); a pod not started yet is protected.
func TestPodProtection(t *testing.T) {
	started := t0.Add(-10 * time.Minute)
	long := t0.Add(-40 * time.Minute)
	ann := func(v string) map[string]string { return map[string]string{apiv1.AnnotationDoNotDisrupt: v} }
	cases := []struct {
		name    string
		ann     map[string]string
		started *time.Time
		active  bool
		until   time.Time
		invalid string // substring of the error
	}{
		{"no annotation", nil, &started, false, time.Time{}, ""},
		{"other annotation", map[string]string{"karpenter.sh/do-not-evict": "true"}, &started, false, time.Time{}, ""},
		{"true", ann("true"), &started, true, time.Time{}, ""},
		{"30m, started 10m ago", ann("30m"), &started, true, t0.Add(20 * time.Minute), ""},
		{"30m, started 40m ago", ann("30m"), &long, false, t0.Add(-10 * time.Minute), ""},
		{"1h30m, started 40m ago", ann("1h30m"), &long, true, t0.Add(50 * time.Minute), ""},
		{"10m, started exactly 10m ago: elapsed", ann("10m"), &started, false, t0, ""},
		{"30m, not started", ann("30m"), nil, true, time.Time{}, ""},
		{"false is not a duration", ann("false"), &started, false, time.Time{}, `failed to parse "false" as a duration`},
		{"TRUE is not true", ann("TRUE"), &started, false, time.Time{}, `failed to parse "TRUE"`},
		{"empty", ann(""), &started, false, time.Time{}, `failed to parse ""`},
		{"days are not Go durations", ann("1d"), &started, false, time.Time{}, `failed to parse "1d"`},
		{"negative", ann("-5m"), &started, false, time.Time{}, `duration "-5m" must be positive`},
		{"zero", ann("0s"), &started, false, time.Time{}, `duration "0s" must be positive`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PodProtection(c.ann, c.started, t0)
			if got.Active != c.active || !got.Until.Equal(c.until) {
				t.Errorf("got %+v, want active=%v until=%s", got, c.active, c.until)
			}
			if c.invalid == "" && got.Invalid != nil || c.invalid != "" && (got.Invalid == nil || !strings.Contains(got.Invalid.Error(), c.invalid)) {
				t.Errorf("invalid: %v, want %q", got.Invalid, c.invalid)
			}
		})
	}
}

// On a node only "true" protects (Karpenter reads durations on pods only).
func TestNodeProtected(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "30m": false, "false": false, "": false} {
		if got := NodeProtected(map[string]string{apiv1.AnnotationDoNotDisrupt: v}); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
	if NodeProtected(nil) {
		t.Error("nil annotations protect")
	}
}
