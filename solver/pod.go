package solver

import (
	"fmt"
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Key is the pod's "namespace/name".
func (p *Pod) Key() string { return p.Namespace + "/" + p.Name }

// PodFromK8s reduces a Kubernetes pod to what the solver needs.
//
// Requests follow the Kubernetes effective-request rule, per resource:
//   - running = sum of the app containers + every native sidecar (an init
//     container with restartPolicy Always);
//   - each regular init container runs alone next to the sidecars started
//     before it, so it needs its own requests + those sidecars;
//   - effective = max(running, the largest such init-phase need), plus
//     spec.overhead; pod-level spec.resources, when set, replace the
//     container total for the resources it names.
//
// A container resource with a limit but no request requests its limit (the
// API server's defaulting). Requests use 1 pod slot. Resource names the
// solver does not track go to UnknownResources. A node-affinity matchFields
// requirement on metadata.name becomes one on kubernetes.io/hostname.
// Labels, preferred node affinity, topology spread, pod (anti-)affinity and
// host ports (containers and init containers) are copied; volume
// requirements are left to the caller (they need the bound PVs). A pod with
// DRA resource claims is Refused (draRefusal).
func PodFromK8s(p *corev1.Pod) Pod {
	out := Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Refused: draRefusal(p)}
	if !p.CreationTimestamp.IsZero() {
		out.CreationUnix = p.CreationTimestamp.Unix()
	}
	out.Requests, out.UnknownResources = podRequests(p)

	if len(p.Spec.NodeSelector) > 0 {
		out.NodeSelector = make(map[string]string, len(p.Spec.NodeSelector))
		for k, v := range p.Spec.NodeSelector {
			out.NodeSelector[k] = v
		}
	}
	out.RequiredAffinity = requiredNodeAffinity(p)
	out.PreferredAffinity = preferredNodeAffinity(p)
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			out.PodAffinity = a.PodAffinity.DeepCopy()
		}
		if a.PodAntiAffinity != nil {
			out.PodAntiAffinity = a.PodAntiAffinity.DeepCopy()
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		out.TopologySpread = append(out.TopologySpread, *p.Spec.TopologySpreadConstraints[i].DeepCopy())
	}
	if len(p.Labels) > 0 {
		out.Labels = make(map[string]string, len(p.Labels))
		for k, v := range p.Labels {
			out.Labels[k] = v
		}
	}
	out.HostPorts = hostPorts(p)
	out.Tolerations = append([]corev1.Toleration(nil), p.Spec.Tolerations...)
	return out
}

// podRequests are the pod's effective requests, as kube-scheduler counts
// them: the running containers and sidecars or the init peak, whichever
// is larger, pod-level requests where set, plus the overhead and one pod;
// unknown lists the resource names the solver does not model (sorted).
// Requests is the pod's effective requests, as PodFromK8s reads them,
// without converting the rest of the pod.
func Requests(p *corev1.Pod) resources.List {
	r, _ := podRequests(p)
	return r
}

func podRequests(p *corev1.Pod) (eff resources.List, unknown []string) {
	seen := map[string]bool{}
	add := func(l resources.List, u []string) resources.List {
		for _, n := range u {
			seen[n] = true
		}
		return l
	}
	var running, sidecars, initPeak resources.List
	for i := range p.Spec.Containers {
		running = running.Add(add(containerRequests(&p.Spec.Containers[i].Resources)))
	}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		r := add(containerRequests(&c.Resources))
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			running = running.Add(r)
			sidecars = sidecars.Add(r)
			initPeak = initPeak.Max(sidecars)
			continue
		}
		initPeak = initPeak.Max(sidecars.Add(r))
	}
	eff = running.Max(initPeak)
	if p.Spec.Resources != nil {
		podLevel, u := containerRequests(p.Spec.Resources)
		add(podLevel, u)
		for name := range mergedRequests(p.Spec.Resources) {
			if i := resources.IndexOf(name); i >= 0 {
				eff[i] = podLevel[i]
			}
		}
	}
	if len(p.Spec.Overhead) > 0 {
		eff = eff.Add(add(resources.FromResourceList(p.Spec.Overhead)))
	}
	eff[resources.Pods] = 1
	for n := range seen {
		unknown = append(unknown, n)
	}
	sort.Strings(unknown)
	return eff, unknown
}

// requiredNodeAffinity is the pod's required node affinity, one
// requirement list per term (matchFields on metadata.name as the hostname
// label).
func requiredNodeAffinity(p *corev1.Pod) [][]apiv1.NodeSelectorRequirementWithMinValues {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out [][]apiv1.NodeSelectorRequirementWithMinValues
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		reqs := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(term.MatchExpressions)+len(term.MatchFields))
		for _, e := range term.MatchExpressions {
			reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: e.Key, Operator: string(e.Operator), Values: append([]string(nil), e.Values...)})
		}
		for _, f := range term.MatchFields {
			key := f.Key
			if key == "metadata.name" {
				key = apiv1.LabelHostname
			}
			reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: string(f.Operator), Values: append([]string(nil), f.Values...)})
		}
		out = append(out, reqs)
	}
	return out
}

// preferredNodeAffinity is the pod's preferred node affinity terms with
// their weights.
func preferredNodeAffinity(p *corev1.Pod) []WeightedTerm {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []WeightedTerm
	for _, w := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		reqs := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(w.Preference.MatchExpressions))
		for _, e := range w.Preference.MatchExpressions {
			reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: e.Key, Operator: string(e.Operator), Values: append([]string(nil), e.Values...)})
		}
		out = append(out, WeightedTerm{Weight: w.Weight, Requirements: reqs})
	}
	return out
}

// hostPorts are the host ports the pod's containers and init containers
// bind.
func hostPorts(p *corev1.Pod) []HostPort {
	var out []HostPort
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			for _, cp := range cs[i].Ports {
				if cp.HostPort > 0 {
					out = append(out, HostPort{Protocol: string(cp.Protocol), IP: cp.HostIP, Port: cp.HostPort})
				}
			}
		}
	}
	return out
}

// draRefusal says why a pod with dynamic resource allocation claims
// (spec.resourceClaims) is not placed ("" when it has none): the devices
// they allocate come from a DRA driver's ResourceSlices, which no instance
// type models, so a node launched for the pod could not be shown to hold
// them. Refusing names the claims instead of buying a node the pod may
// never start on.
func draRefusal(p *corev1.Pod) string {
	if len(p.Spec.ResourceClaims) == 0 {
		return ""
	}
	names := make([]string, len(p.Spec.ResourceClaims))
	for i, c := range p.Spec.ResourceClaims {
		names[i] = c.Name
	}
	return fmt.Sprintf("pod requests DRA resource claims (spec.resourceClaims: %s); Joinery does not provision for dynamic resource allocation",
		strings.Join(names, ", "))
}

// DaemonSetFromK8s reduces a DaemonSet to its pod template's scheduling needs.
func DaemonSetFromK8s(ds *appsv1.DaemonSet) DaemonSet {
	pod := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec}
	pod.Namespace, pod.Name = ds.Namespace, ds.Name
	return DaemonSet{Namespace: ds.Namespace, Name: ds.Name, Pod: PodFromK8s(pod)}
}

// containerRequests is requests with limits filling the resources that have
// only a limit.
func containerRequests(r *corev1.ResourceRequirements) (resources.List, []string) {
	return resources.FromResourceList(mergedRequests(r))
}

func mergedRequests(r *corev1.ResourceRequirements) corev1.ResourceList {
	rl := make(corev1.ResourceList, len(r.Limits)+len(r.Requests))
	for k, v := range r.Limits {
		rl[k] = v
	}
	for k, v := range r.Requests {
		rl[k] = v
	}
	return rl
}
