package nodeclass

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// evictionSignals are the signals an eviction map may name: the kubelet
// ignores any other key, which would drop the threshold silently.
var evictionSignals = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}

// reservable are the resources kubeReserved and systemReserved may name.
var reservable = []string{"cpu", "memory", "ephemeral-storage", "pid"}

// kubeletSemantics are Karpenter v1.15's rules the upstream type cannot
// say: registerWithTaints is Joinery's to set (the NodeClaim's taints);
// eviction maps keyed by signal, thresholds a percentage or a quantity,
// grace periods durations, soft thresholds and grace periods in pairs;
// reserved maps keyed by reservable resource, never negative; percentages
// 0-100, counts not negative, image GC high above low.
func kubeletSemantics(raw map[string]json.RawMessage) []KubeletProblem {
	var out []KubeletProblem
	if _, ok := raw["registerWithTaints"]; ok {
		out = append(out, KubeletProblem{"spec.kubelet.registerWithTaints", "can't be set, Joinery sets it from the NodeClaim's taints so the node registers unschedulable until it's ready"})
	}
	out = append(out, evictionRules(raw)...)
	out = append(out, reservedRules(raw)...)
	return append(out, numberRules(raw)...)
}

func evictionRules(raw map[string]json.RawMessage) []KubeletProblem {
	var out []KubeletProblem
	for _, field := range []string{"evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"} {
		m, _ := stringMap(raw, field)
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(evictionSignals, key) {
				out = append(out, KubeletProblem{"spec.kubelet." + field, fmt.Sprintf("%q isn't a valid eviction signal, must be one of %s", key, strings.Join(evictionSignals, ", "))})
			}
			check := threshold
			if field == "evictionSoftGracePeriod" {
				check = gracePeriod
			}
			if why := check(m[key]); why != "" {
				out = append(out, KubeletProblem{fmt.Sprintf("spec.kubelet.%s[%s]", field, key), why})
			}
		}
	}
	soft, _ := stringMap(raw, "evictionSoft")
	grace, _ := stringMap(raw, "evictionSoftGracePeriod")
	for _, s := range slices.Sorted(maps.Keys(soft)) {
		if _, ok := grace[s]; !ok {
			out = append(out, KubeletProblem{fmt.Sprintf("spec.kubelet.evictionSoft[%s]", s), "has no matching evictionSoftGracePeriod"})
		}
	}
	for _, s := range slices.Sorted(maps.Keys(grace)) {
		if _, ok := soft[s]; !ok {
			out = append(out, KubeletProblem{fmt.Sprintf("spec.kubelet.evictionSoftGracePeriod[%s]", s), "has no matching evictionSoft"})
		}
	}
	return out
}

// threshold: a percentage in [0, 100] or a non-negative quantity.
func threshold(v string) string {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		if f, err := strconv.ParseFloat(pct, 64); err != nil || f < 0 || f > 100 {
			return fmt.Sprintf("%q must be a percentage or a resource quantity", v)
		}
		return ""
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return fmt.Sprintf("%q must be a percentage or a resource quantity", v)
	}
	if q.Sign() < 0 {
		return fmt.Sprintf("%q can't be a negative resource quantity", v)
	}
	return ""
}

// gracePeriod: a non-negative Go duration.
func gracePeriod(v string) string {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Sprintf("%q must be a duration", v)
	}
	if d < 0 {
		return fmt.Sprintf("%q can't be a negative duration", v)
	}
	return ""
}

// reservedRules: reservable keys, no negative value. A value need not be
// a quantity: it may be an expression, resolved per instance type.
func reservedRules(raw map[string]json.RawMessage) []KubeletProblem {
	var out []KubeletProblem
	for _, field := range []string{"kubeReserved", "systemReserved"} {
		m, _ := stringMap(raw, field)
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(reservable, key) {
				out = append(out, KubeletProblem{"spec.kubelet." + field, fmt.Sprintf("%q isn't a reservable resource, must be one of %s", key, strings.Join(reservable, ", "))})
			}
			if strings.HasPrefix(m[key], "-") {
				out = append(out, KubeletProblem{fmt.Sprintf("spec.kubelet.%s[%s]", field, key), fmt.Sprintf("%q can't be a negative resource quantity", m[key])})
			}
		}
	}
	return out
}

func numberRules(raw map[string]json.RawMessage) []KubeletProblem {
	var out []KubeletProblem
	for _, field := range []string{"imageGCHighThresholdPercent", "imageGCLowThresholdPercent"} {
		if v, ok := integer(raw, field); ok && (v < 0 || v > 100) {
			out = append(out, KubeletProblem{"spec.kubelet." + field, fmt.Sprintf("%d must be between 0 and 100", v)})
		}
	}
	// maxPods's expression is checked once evaluated for a type.
	for _, field := range []string{"podsPerCore", "evictionMaxPodGracePeriod", "maxPods"} {
		if v, ok := integer(raw, field); ok && v < 0 {
			out = append(out, KubeletProblem{"spec.kubelet." + field, fmt.Sprintf("%d can't be negative", v)})
		}
	}
	high, hok := integer(raw, "imageGCHighThresholdPercent")
	low, lok := integer(raw, "imageGCLowThresholdPercent")
	if hok && lok && high <= low {
		out = append(out, KubeletProblem{"spec.kubelet", fmt.Sprintf("imageGCHighThresholdPercent (%d) must be greater than imageGCLowThresholdPercent (%d)", high, low)})
	}
	return out
}

// stringMap reads a map of strings; a value of another type is left to
// the strict decode to report.
func stringMap(raw map[string]json.RawMessage, field string) (map[string]string, bool) {
	var m map[string]string
	v, ok := raw[field]
	if !ok || json.Unmarshal(v, &m) != nil {
		return nil, false
	}
	return m, true
}

func integer(raw map[string]json.RawMessage, field string) (int64, bool) {
	var n int64
	v, ok := raw[field]
	if !ok || json.Unmarshal(v, &n) != nil {
		return 0, false
	}
	return n, true
}
