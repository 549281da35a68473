package repair

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// NodePool annotations that tune repair for the pool's nodes (Karpenter
// has no per-pool setting; its users ask for one).
const (
	// AnnotationMaxUnhealthy caps the pool's nodes repaired at once: a
	// count ("1") or a percentage of its nodes, rounded up ("20%").
	AnnotationMaxUnhealthy = "joinery.sh/repair-max-unhealthy"
	// AnnotationTolerations overrides tolerations: "Type=Status:duration"
	// items, comma-separated ("AcceleratedHardwareReady=False:5m").
	AnnotationTolerations = "joinery.sh/repair-tolerations"
)

// DefaultMaxUnhealthy is Karpenter's: 20% of a pool's nodes.
var DefaultMaxUnhealthy = intstr.FromString("20%")

// Settings are one pool's repair settings.
type Settings struct {
	MaxUnhealthy intstr.IntOrString
	Policies     []Policy
}

// PoolSettings reads a NodePool's annotations over the defaults. A bad
// value is an error naming the annotation and what it accepts; the
// caller then uses the defaults.
func PoolSettings(annotations map[string]string, policies []Policy) (Settings, error) {
	s := Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: append([]Policy(nil), policies...)}
	if v, ok := annotations[AnnotationMaxUnhealthy]; ok {
		m, err := parseMaxUnhealthy(v)
		if err != nil {
			return Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: policies}, err
		}
		s.MaxUnhealthy = m
	}
	if v, ok := annotations[AnnotationTolerations]; ok {
		if err := overrideTolerations(s.Policies, v); err != nil {
			return Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: policies}, err
		}
	}
	return s, nil
}

func parseMaxUnhealthy(v string) (intstr.IntOrString, error) {
	v = strings.TrimSpace(v)
	if p, ok := strings.CutSuffix(v, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 100 {
			return intstr.IntOrString{}, fmt.Errorf("%s: %q is not a percentage from 0%% to 100%%", AnnotationMaxUnhealthy, v)
		}
		return intstr.FromString(v), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return intstr.IntOrString{}, fmt.Errorf("%s: %q is neither a node count (0 or more) nor a percentage such as \"20%%\"", AnnotationMaxUnhealthy, v)
	}
	return intstr.FromInt32(int32(n)), nil
}

// overrideTolerations sets the tolerations the annotation value names in
// policies (in place).
func overrideTolerations(policies []Policy, v string) error {
	var keys []string
	for _, p := range policies {
		keys = append(keys, p.Key())
	}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, dur, ok := strings.Cut(item, ":")
		key = strings.TrimSpace(key)
		if !ok {
			return fmt.Errorf("%s: %q is not Type=Status:duration (e.g. AcceleratedHardwareReady=False:5m)", AnnotationTolerations, item)
		}
		d, err := time.ParseDuration(strings.TrimSpace(dur))
		if err != nil || d < 0 {
			return fmt.Errorf("%s: %q: %q is not a duration of 0 or more (e.g. 5m, 1h)", AnnotationTolerations, item, strings.TrimSpace(dur))
		}
		i := slices.Index(keys, key)
		if i < 0 {
			return fmt.Errorf("%s: %q names no repair policy (known: %s)", AnnotationTolerations, key, strings.Join(keys, ", "))
		}
		policies[i].Toleration = d
	}
	return nil
}

// Cap is how many of total nodes may be repaired at once (percentages
// rounded up, as Karpenter and PodDisruptionBudgets round).
func (s Settings) Cap(total int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&s.MaxUnhealthy, total, true)
	if err != nil {
		return 0 // not reached: PoolSettings validated it
	}
	return n
}
