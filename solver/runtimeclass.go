package solver

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
)

// RuntimeClassLookup finds a RuntimeClass by name (nil: none of that name).
// A nil RuntimeClassLookup finds none.
type RuntimeClassLookup func(name string) *nodev1.RuntimeClass

func (l RuntimeClassLookup) get(name string) *nodev1.RuntimeClass {
	if l == nil {
		return nil
	}
	return l(name)
}

// AdmitRuntimeClass changes a pod spec as the RuntimeClass admission plugin
// (kube-apiserver plugin/pkg/admission/runtimeclass) does when the pod is
// created, and returns why that plugin would reject the pod ("" when it
// admits it). Pods Joinery plans before they exist (workload templates in
// `starter plan`, DaemonSet templates) need it: a real pod carries
// spec.overhead from admission, a template does not. What it does:
//   - spec.overhead is the class's overhead.podFixed; a pod already
//     carrying a different overhead, or one without a class that defines
//     it, is rejected;
//   - the class's scheduling.nodeSelector is merged into the pod's (the
//     same key with another value rejects the pod) and its tolerations are
//     added;
//   - a class that does not exist rejects the pod.
func AdmitRuntimeClass(spec *corev1.PodSpec, lookup RuntimeClassLookup) string {
	if spec.RuntimeClassName == nil {
		if spec.Overhead != nil {
			return "the RuntimeClass admission plugin rejects the pod: spec.overhead is set without a RuntimeClass that defines it"
		}
		return ""
	}
	name := *spec.RuntimeClassName
	rc := lookup.get(name)
	if rc == nil {
		return fmt.Sprintf("the RuntimeClass admission plugin rejects the pod: RuntimeClass %q (spec.runtimeClassName) not found", name)
	}
	if why := admitOverhead(spec, rc); why != "" {
		return why
	}
	return admitScheduling(spec, rc)
}

// admitOverhead sets the class's overhead (setOverhead and validateOverhead
// of the plugin).
func admitOverhead(spec *corev1.PodSpec, rc *nodev1.RuntimeClass) string {
	if rc.Overhead == nil {
		if spec.Overhead != nil {
			return fmt.Sprintf("the RuntimeClass admission plugin rejects the pod: spec.overhead is set but RuntimeClass %q defines no overhead", rc.Name)
		}
		return ""
	}
	if len(spec.Overhead) > 0 && !sameResources(spec.Overhead, rc.Overhead.PodFixed) {
		return fmt.Sprintf("the RuntimeClass admission plugin rejects the pod: spec.overhead differs from RuntimeClass %q overhead.podFixed", rc.Name)
	}
	spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return ""
}

// admitScheduling merges the class's node selector and tolerations
// (setScheduling of the plugin). Tolerations are appended whole: the
// plugin also drops ones another tolerates a superset of, which tolerates
// the same taints.
func admitScheduling(spec *corev1.PodSpec, rc *nodev1.RuntimeClass) string {
	if rc.Scheduling == nil {
		return ""
	}
	keys := make([]string, 0, len(rc.Scheduling.NodeSelector))
	for k := range rc.Scheduling.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := rc.Scheduling.NodeSelector[k]
		if pv, ok := spec.NodeSelector[k]; ok && pv != v {
			return fmt.Sprintf("the RuntimeClass admission plugin rejects the pod: RuntimeClass %q scheduling.nodeSelector[%s] = %s conflicts with spec.nodeSelector[%s] = %s",
				rc.Name, k, v, k, pv)
		}
	}
	if len(keys) > 0 && spec.NodeSelector == nil {
		spec.NodeSelector = make(map[string]string, len(keys))
	}
	for _, k := range keys {
		spec.NodeSelector[k] = rc.Scheduling.NodeSelector[k]
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !hasToleration(spec.Tolerations, t) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	return ""
}

func hasToleration(ts []corev1.Toleration, t corev1.Toleration) bool {
	for i := range ts {
		if ts[i].MatchToleration(&t) && equalSeconds(ts[i].TolerationSeconds, t.TolerationSeconds) {
			return true
		}
	}
	return false
}

func equalSeconds(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameResources is semantic equality of two resource lists (1000m = 1).
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		o, ok := b[k]
		if !ok || q.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// AdmittedDaemonSet is DaemonSetFromK8s of the DaemonSet after RuntimeClass
// admission of its pod template (AdmitRuntimeClass), so its pods' overhead
// counts on every new node. When admission rejects the template it returns
// the reason: the DaemonSet controller's pods are rejected too, so none run
// and the caller reserves nothing for them.
func AdmittedDaemonSet(ds *appsv1.DaemonSet, lookup RuntimeClassLookup) (DaemonSet, string) {
	admitted := *ds
	admitted.Spec.Template.Spec = *ds.Spec.Template.Spec.DeepCopy()
	if why := AdmitRuntimeClass(&admitted.Spec.Template.Spec, lookup); why != "" {
		return DaemonSet{}, why
	}
	return DaemonSetFromK8s(&admitted), ""
}
