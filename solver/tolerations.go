package solver

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// tolerates reports whether a toleration matches a taint, by the Kubernetes
// rules: empty effect matches every effect, empty key with Exists matches
// every key, Equal (or empty) compares values, Exists ignores them, Gt/Lt
// compare integers (taint value vs toleration value).
func tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpLt, corev1.TolerationOpGt:
		tv, err1 := strconv.ParseInt(t.Value, 10, 64)
		nv, err2 := strconv.ParseInt(taint.Value, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if t.Operator == corev1.TolerationOpLt {
			return nv < tv
		}
		return nv > tv
	}
	return false
}

// untolerated returns the first taint with effect NoSchedule or NoExecute
// that no toleration matches, or nil. PreferNoSchedule taints block only
// when preferNo is set: the solver honours them as a preference first and
// relaxes that last (Karpenter's order).
func untolerated(taints []corev1.Taint, tols []corev1.Toleration, preferNo bool) *corev1.Taint {
	for i := range taints {
		taint := &taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute &&
			!(preferNo && taint.Effect == corev1.TaintEffectPreferNoSchedule) {
			continue
		}
		ok := false
		for j := range tols {
			if tolerates(&tols[j], taint) {
				ok = true
				break
			}
		}
		if !ok {
			return taint
		}
	}
	return nil
}

// taintString formats a taint as key=value:Effect (key:Effect when the value is empty).
func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// Tolerated reports whether a pod with these tolerations may be scheduled
// on a node with these taints (every NoSchedule and NoExecute taint
// tolerated), as the kube-scheduler's TaintToleration filter decides.
func Tolerated(taints []corev1.Taint, tols []corev1.Toleration) bool {
	return untolerated(taints, tols, false) == nil
}
