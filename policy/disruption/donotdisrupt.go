package disruption

import (
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Protection is what a pod's karpenter.sh/do-not-disrupt annotation says
// at a given time (PodProtection).
type Protection struct {
	// Active: the pod may not be voluntarily disrupted now.
	Active bool
	// Until is when a duration's protection ends (zero: "true", or a
	// duration on a pod that has not started, both protected until the
	// annotation goes).
	Until time.Time
	// Invalid is set when the value is neither "true" nor a positive Go
	// duration: the annotation is then ignored (Karpenter emits the Warning
	// Event InvalidDoNotDisruptAnnotation on the pod).
	Invalid error
}

// PodProtection evaluates a pod's karpenter.sh/do-not-disrupt annotation at
// now, as Karpenter v1.12+ does (pkg/utils/pod IsDoNotDisruptActive):
// "true" protects for as long as it is set; a positive Go duration
// ("30m", "1h30m") protects until that long after the pod started
// (status.startTime; a pod without a start time is protected, failing
// safe); anything else is invalid and ignored. Only active pods (neither
// Succeeded nor Failed) are protected; the caller checks that. started is
// the pod's status.startTime (nil: not started).
func PodProtection(annotations map[string]string, started *time.Time, now time.Time) Protection {
	v, ok := annotations[apiv1.AnnotationDoNotDisrupt]
	if !ok {
		return Protection{}
	}
	if v == "true" {
		return Protection{Active: true}
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return Protection{Invalid: fmt.Errorf("failed to parse %q as a duration: %w", v, err)}
	case d <= 0:
		return Protection{Invalid: fmt.Errorf("duration %q must be positive", v)}
	}
	if started == nil || started.IsZero() {
		return Protection{Active: true}
	}
	until := started.Add(d)
	return Protection{Active: now.Before(until), Until: until}
}

// NodeProtected reports whether a node's karpenter.sh/do-not-disrupt
// annotation blocks voluntary disruption: only "true" does (Karpenter
// reads durations on pods only).
func NodeProtected(annotations map[string]string) bool {
	return annotations[apiv1.AnnotationDoNotDisrupt] == "true"
}
